import type { IAuthenticateGeneric, ICredentialTestRequest, ICredentialType, INodeProperties } from 'n8n-workflow';

/** A mediaflow server: its address and, when it has MEDIAFLOW_API_KEY set, the key (sent as X-API-Key). */
export class MediaflowApi implements ICredentialType {
  name = 'mediaflowApi';

  displayName = 'Mediaflow API';

  // The rule expects a camelCase slug of n8n's own documentation; a community credential's is its own page.
  // eslint-disable-next-line n8n-nodes-base/cred-class-field-documentation-url-miscased
  documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-mediaflow';

  properties: INodeProperties[] = [
    {
      displayName: 'Base URL',
      name: 'baseUrl',
      type: 'string',
      default: 'http://127.0.0.1:8000',
      placeholder: 'http://mediaflow:8000',
      description: 'The address n8n reaches mediaflow at',
    },
    {
      displayName: 'API Key',
      name: 'apiKey',
      type: 'string',
      typeOptions: { password: true },
      default: '',
      description: "The server's MEDIAFLOW_API_KEY (or one of MEDIAFLOW_API_KEYS); empty for a server without one",
    },
  ];

  authenticate: IAuthenticateGeneric = {
    type: 'generic',
    properties: { headers: { 'X-API-Key': '={{$credentials.apiKey}}' } },
  };

  // GET /pipelines needs the key when the server has one: a wrong key is a 401 here.
  test: ICredentialTestRequest = {
    request: { baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}', url: '/pipelines' },
  };
}
