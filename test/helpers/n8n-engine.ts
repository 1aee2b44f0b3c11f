/**
 * Runs nodes as n8n runs them: a Workflow (n8n-workflow) executed by n8n-core's WorkflowExecute, the engine
 * inside n8n, which makes each node's execution context (parameters, credentials, HTTP helpers, binary data).
 * What n8n's own application adds around it (its database of credentials, its UI) is not installed here; the
 * credentials helper below does for one credential what n8n's does: hands over its data, and applies a
 * credential type's generic `authenticate` block by resolving its expressions (`={{$credentials.apiKey}}`).
 */
import {
  ICredentialsHelper,
  Workflow,
  type ICredentialDataDecryptedObject,
  type ICredentials,
  type ICredentialType,
  type IHttpRequestOptions,
  type ILoadOptionsFunctions,
  type INode,
  type INodeParameters,
  type INodeProperties,
  type INodeType,
  type INodeTypes,
  type IWorkflowExecuteAdditionalData,
} from 'n8n-workflow';
import { ExecutionLifecycleHooks, LoadOptionsContext, WorkflowExecute } from 'n8n-core';

export interface WorkflowNode {
  name: string;
  type: INodeType;
  parameters: INodeParameters;
}

/** One credential of one type, as n8n's CredentialsHelper gives it to nodes. */
class OneCredentialHelper extends ICredentialsHelper {
  constructor(
    private readonly type: ICredentialType,
    private readonly data: ICredentialDataDecryptedObject,
  ) {
    super();
  }

  getParentTypes(): string[] {
    return [];
  }

  async authenticate(
    credentials: ICredentialDataDecryptedObject,
    _typeName: string,
    requestOptions: IHttpRequestOptions,
    workflow: Workflow,
    node: INode,
  ): Promise<IHttpRequestOptions> {
    const authenticate = this.type.authenticate;
    if (typeof authenticate !== 'object' || authenticate.type !== 'generic') return requestOptions;
    const resolve = (value: string) =>
      workflow.expression.getSimpleParameterValue(
        node,
        value,
        'manual',
        { $credentials: credentials },
        undefined,
        value,
      );
    const options = requestOptions as unknown as Record<string, Record<string, unknown>>;
    for (const [where, entries] of Object.entries(authenticate.properties)) {
      options[where] ??= {};
      for (const [key, value] of Object.entries(entries as Record<string, string>)) {
        options[where][String(resolve(key))] = resolve(value);
      }
    }
    return requestOptions;
  }

  async preAuthentication(): Promise<undefined> {
    return undefined;
  }

  async getCredentials(): Promise<ICredentials> {
    throw new Error('not used: nodes get decrypted credentials');
  }

  async getDecrypted(): Promise<ICredentialDataDecryptedObject> {
    return { ...this.data };
  }

  async updateCredentials(): Promise<void> {}

  async updateCredentialsOauthTokenData(): Promise<void> {}

  getCredentialsProperties(): INodeProperties[] {
    return this.type.properties;
  }
}

/**
 * n8n keeps its instance settings (an encryption key) in `$N8N_USER_FOLDER/.n8n/config`, by default under the
 * home folder: a test gives it a temporary folder of its own, before n8n-core first reads its settings.
 */
function assertOwnUserFolder(): void {
  if (!process.env.N8N_USER_FOLDER) throw new Error('Set N8N_USER_FOLDER to a temporary folder: n8n writes there');
}

/** A run under way: awaited for its IRun, or stopped with cancel() as the editor's "Stop" button does. */
export type WorkflowRun = ReturnType<WorkflowExecute['run']>;

/** The nodes as an n8n Workflow, each feeding the next, with the given credential on the nodes that take it. */
function buildWorkflow(nodes: WorkflowNode[], credentialType?: ICredentialType) {
  const typeName = (node: WorkflowNode) => `test.${node.type.description.name}`;
  const nodeTypes: INodeTypes = {
    getByName: (type) => nodes.find((node) => typeName(node) === type)!.type,
    getByNameAndVersion: (type) => nodes.find((node) => typeName(node) === type)!.type,
    getKnownTypes: () => ({}),
  };
  const workflowNodes: INode[] = nodes.map((node, index) => ({
    id: String(index + 1),
    name: node.name,
    type: typeName(node),
    typeVersion: 1,
    position: [index * 200, 0],
    parameters: node.parameters,
    ...(credentialType &&
    node.type.description.credentials?.some((credential) => credential.name === credentialType.name)
      ? { credentials: { [credentialType.name]: { id: '1', name: credentialType.displayName } } }
      : {}),
  }));
  const connections = Object.fromEntries(
    nodes
      .slice(0, -1)
      .map((node, index) => [
        node.name,
        { main: [[{ node: nodes[index + 1]!.name, type: 'main' as const, index: 0 }]] },
      ]),
  );
  const workflow = new Workflow({
    id: 'w1',
    name: 'test',
    nodes: workflowNodes,
    connections,
    active: false,
    nodeTypes,
  });
  return { workflow, workflowNodes, connections };
}

/**
 * A node's subtitle as n8n's editor shows it under the node on the canvas: its type's `subtitle` expression
 * resolved against the node's parameters, as the editor resolves it.
 */
export function nodeSubtitle(type: INodeType, parameters: INodeParameters): unknown {
  const { workflow } = buildWorkflow([{ name: 'Node', type, parameters }]);
  return workflow.expression.getSimpleParameterValue(
    workflow.getNode('Node')!,
    type.description.subtitle ?? '',
    'internal',
    {},
  );
}

/** What n8n hands the engine besides the workflow: the credential helper, the hooks, the instance's URLs. */
function additionalDataOf(
  credentialType: ICredentialType,
  credentialData: ICredentialDataDecryptedObject,
  hooks?: ExecutionLifecycleHooks,
): IWorkflowExecuteAdditionalData {
  return {
    credentialsHelper: new OneCredentialHelper(credentialType, credentialData),
    ...(hooks ? { hooks } : {}),
    executeWorkflow: async () => {
      throw new Error('no sub-workflows here');
    },
    getRunExecutionData: async () => undefined,
    currentNodeExecutionIndex: 0,
    restApiUrl: 'http://127.0.0.1:5678/rest',
    instanceBaseUrl: 'http://127.0.0.1:5678/',
    formWaitingBaseUrl: 'http://127.0.0.1:5678/form-waiting',
    webhookBaseUrl: 'http://127.0.0.1:5678/webhook',
    webhookWaitingBaseUrl: 'http://127.0.0.1:5678/webhook-waiting',
    webhookTestBaseUrl: 'http://127.0.0.1:5678/webhook-test',
    variables: {},
    logAiEvent: () => {},
    startRunnerTask: async () => {
      throw new Error('no task runners here');
    },
  } as unknown as IWorkflowExecuteAdditionalData;
}

/**
 * Runs the nodes, each feeding the next, in n8n-core's WorkflowExecute ('manual' mode, as "Execute workflow"
 * in the editor), with the given credential for every node that asks for its type.
 */
export function runWorkflow(
  nodes: WorkflowNode[],
  credentialType: ICredentialType,
  credentialData: ICredentialDataDecryptedObject,
): WorkflowRun {
  assertOwnUserFolder();
  const { workflow, workflowNodes, connections } = buildWorkflow(nodes, credentialType);
  const workflowData = {
    id: 'w1',
    name: 'test',
    active: false,
    isArchived: false,
    activeVersionId: null,
    nodes: workflowNodes,
    connections,
    settings: {},
    createdAt: new Date(),
    updatedAt: new Date(),
  };
  const hooks = new ExecutionLifecycleHooks('manual', 'e1', workflowData);
  const additionalData = additionalDataOf(credentialType, credentialData, hooks);
  return new WorkflowExecute(additionalData, 'manual').run(workflow, workflow.getNode(nodes[0]!.name)!);
}

/**
 * Calls one of a node's `methods` (loadOptions, resourceMapping) as n8n's editor has its server call it while the
 * node is edited: in n8n-core's LoadOptionsContext, with the node's current parameters and its credential, for the
 * property at `path` (`parameters.<name>`).
 */
export async function loadNodeOptions<T>(
  node: WorkflowNode,
  method: (this: ILoadOptionsFunctions) => Promise<T>,
  path: string,
  credentialType: ICredentialType,
  credentialData: ICredentialDataDecryptedObject,
): Promise<T> {
  assertOwnUserFolder();
  const { workflow } = buildWorkflow([node], credentialType);
  const additionalData = additionalDataOf(credentialType, credentialData);
  additionalData.currentNodeParameters = node.parameters;
  return await method.call(new LoadOptionsContext(workflow, workflow.getNode(node.name)!, additionalData, path));
}
