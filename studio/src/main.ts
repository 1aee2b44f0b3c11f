import type { Problem } from '../../src/sdk.js';
import { templateInfo, type TemplateField } from '../../src/plugins/render/template-fields.js';
import { ApiError, apiKey, apiUrl, AUTH_EVENT, callJson, isOwnOutput, jsonBody } from './api.js';
import { analyse, diagnosticsOf, type Analysis } from './check.js';
import { byId, el, replace } from './dom.js';
import { createEditor } from './editor.js';
import { newId, urlField, type Field } from './fields.js';
import { clipAt, pathAt } from './json-map.js';
import { JobList, JobPanel } from './jobs.js';
import { drawOperationForm, editSchemaOf, operationsOf, type Operation } from './operations.js';
import { drawTimeline, type Storyboard, type Timeline, type TimelineClip } from './timeline.js';

/**
 * The studio page (docs/studio.md): an edit document typed or opened from a template, checked as it is typed and
 * resolved by the server's dry run into the timeline drawn beside it; rendered as a job that the page follows and
 * plays; the key's jobs; and a form for every operation.
 */

interface TemplateSummary {
  name: string;
  description: string;
}

/** What the last dry run said, of which text and merge values. */
interface ServerCheck {
  text: string;
  values: string;
  problems: Problem[];
  /** A failure that is no problem of a path (a download that failed, say). */
  general?: string;
}

const page = {
  editorHost: byId('editor', HTMLDivElement),
  selection: byId('selection', HTMLParagraphElement),
  mergeFields: byId('merge-fields', HTMLDivElement),
  problems: byId('problems', HTMLDivElement),
  templateSelect: byId('template', HTMLSelectElement),
  templateOpen: byId('open-template', HTMLButtonElement),
  templateDescription: byId('template-description', HTMLParagraphElement),
  dryRunState: byId('dry-run-state', HTMLParagraphElement),
  timeline: byId('timeline', HTMLDivElement),
  renderButton: byId('render-button', HTMLButtonElement),
  job: byId('job', HTMLDivElement),
  jobList: byId('job-list', HTMLDivElement),
  refreshJobs: byId('refresh-jobs', HTMLButtonElement),
  operation: byId('operation', HTMLSelectElement),
  operationForm: byId('operation-form', HTMLDivElement),
  keyForm: byId('key-form', HTMLFormElement),
  keyInput: byId('key-input', HTMLInputElement),
  keyMessage: byId('key-message', HTMLParagraphElement),
  keyState: byId('key-state', HTMLDivElement),
};

let schema: object | undefined;
let analysis: Analysis = { text: '', problems: [] };
let server: ServerCheck | undefined;
let drawn: { timeline: Timeline; document: unknown; text: string; storyboard?: Storyboard } | undefined;
let selected: { track: number; index: number } | undefined;
/** Whether to ask the dry run for a storyboard: a server without the storyboard answers 501, then no more asks. */
let storyboards = true;
let dryRun: AbortController | undefined;
let mergeShape = '';
const mergeValues = new Map<string, string>();
const mergeControls = new Map<string, Field>();
let operations: Operation[] = [];

const values = (): Record<string, string> =>
  Object.fromEntries([...mergeValues].filter(([name, value]) => value !== '' && mergeControls.has(name)));

const editor = createEditor(page.editorHost, {
  changed: () => schedule(),
  moved: (from, to) => {
    const clip = analysis.mapped && analysis.text === editor.text() ? clipAt(pathAt(analysis.mapped, from)) : undefined;
    const lines = `lines ${editor.lineOf(from)} to ${editor.lineOf(to)}`;
    page.selection.textContent = clip
      ? `Selected: track ${clip.track + 1}, clip ${clip.index + 1} (${lines})`
      : `Selected: ${lines}`;
    if (clip?.track === selected?.track && clip?.index === selected?.index) return;
    selected = clip;
    draw();
  },
});

const jobPanel = new JobPanel(page.job, (job) => jobList.update(job));
const jobList = new JobList(page.jobList, (job) => jobPanel.follow(job.job_id, job.name));

let checkTimer: ReturnType<typeof setTimeout> | undefined;
let dryRunTimer: ReturnType<typeof setTimeout> | undefined;

/** Checks the document a moment after typing stops, and asks the server's dry run a moment after that. */
function schedule(): void {
  clearTimeout(checkTimer);
  checkTimer = setTimeout(check, 150);
}

function check(): void {
  if (!schema) return;
  analysis = analyse(editor.text(), schema, values());
  showMergeFields();
  draw();
  clearTimeout(dryRunTimer);
  dryRun?.abort();
  if (analysis.mapped && analysis.problems.length === 0) dryRunTimer = setTimeout(resolveTimeline, 400);
  else
    page.dryRunState.textContent = analysis.text.trim()
      ? 'The document has problems: fix them to see its timeline.'
      : '';
}

/** The problems of the document now: the page's own check, and the dry run's when it was of this text. */
function problemsNow(): Problem[] {
  const fromServer =
    server && server.text === analysis.text && server.values === JSON.stringify(values()) ? server.problems : [];
  return [...analysis.problems, ...fromServer];
}

/** Asks the server to resolve the document (dry_run), with a storyboard when it draws them. */
async function resolveTimeline(): Promise<void> {
  if (!analysis.mapped) return;
  const asked = { text: analysis.text, values: JSON.stringify(values()), document: analysis.mapped.value };
  const controller = new AbortController();
  dryRun = controller;
  page.dryRunState.textContent = 'Resolving the timeline…';
  const body = { edit: asked.document, merge: values(), dry_run: true, ...(storyboards ? { storyboard: true } : {}) };
  try {
    const answer = await callJson<{ timeline: Timeline; storyboard_url?: string }>('render/', {
      ...jsonBody(body),
      signal: controller.signal,
    });
    const storyboard =
      answer.storyboard_url && isOwnOutput(answer.storyboard_url) ? await boardOf(answer.storyboard_url) : undefined;
    if (controller.signal.aborted) return;
    server = { text: asked.text, values: asked.values, problems: [] };
    drawn = {
      timeline: answer.timeline,
      document: asked.document,
      text: asked.text,
      ...(storyboard ? { storyboard } : {}),
    };
    page.dryRunState.textContent = `Resolved: ${answer.timeline.clips.length} clips, ${answer.timeline.duration} s.`;
  } catch (error) {
    if (controller.signal.aborted) return;
    if (!(error instanceof ApiError)) throw error;
    if (error.status === 501 && storyboards && /storyboard/i.test(error.message)) {
      storyboards = false;
      return resolveTimeline();
    }
    server = {
      text: asked.text,
      values: asked.values,
      problems: error.errors,
      ...(error.errors.length === 0 ? { general: `${error.status}: ${error.message}` } : {}),
    };
    page.dryRunState.textContent = `The server's dry run refused the document (${error.status}).`;
  }
  draw();
}

/** The storyboard with its size, read from the picture; none when it cannot be loaded. */
async function boardOf(url: string): Promise<Storyboard | undefined> {
  const picture = new Image();
  picture.src = url;
  try {
    await picture.decode();
  } catch {
    return undefined;
  }
  return { url, width: picture.naturalWidth, height: picture.naturalHeight };
}

/** The problems list, the underlines and the timeline, for the document now. */
function draw(): void {
  const problems = problemsNow();
  editor.show(diagnosticsOf(analysis, problems));
  const general = server && server.text === analysis.text ? server.general : undefined;
  replace(
    page.problems,
    analysis.syntax ? el('p', { class: 'error' }, analysis.syntax.message) : null,
    general ? el('p', { class: 'error' }, general) : null,
    problems.length > 0
      ? el(
          'ul',
          { attrs: { 'aria-label': 'Problems of the document' } },
          ...problems.map((problem) =>
            el(
              'li',
              {},
              el(
                'button',
                { attrs: { type: 'button', class: 'link' }, on: { click: () => selectPath(problem.path) } },
                `${problem.path || 'the document'}: ${problem.error}`,
              ),
            ),
          ),
        )
      : null,
  );
  page.renderButton.disabled = !analysis.mapped || problems.length > 0;
  if (!drawn) return replace(page.timeline, el('p', {}, 'No timeline yet: open a template or paste a document.'));
  const focused = document.activeElement instanceof HTMLElement ? document.activeElement.dataset : undefined;
  drawTimeline(
    page.timeline,
    {
      timeline: drawn.timeline,
      document: drawn.document,
      problems,
      ...(selected ? { selected } : {}),
      ...(drawn.storyboard ? { storyboard: drawn.storyboard } : {}),
      ...(drawn.text === analysis.text
        ? {}
        : {
            stale:
              problems.length > 0 || general
                ? 'The last timeline that resolved: the document has changed since, and has problems.'
                : 'The last timeline that resolved: the document has changed since.',
          }),
    },
    chooseClip,
  );
  // A bar pressed with the keyboard keeps the focus across the redraw.
  if (focused?.track !== undefined)
    page.timeline
      .querySelector<HTMLElement>(`.clip[data-track="${focused.track}"][data-index="${focused.index}"]`)
      ?.focus();
}

/** Selects the text of a path in the editor. */
function selectPath(path: string): void {
  const span = analysis.mapped?.spans.get(path);
  if (span) editor.select(span.key?.from ?? span.from, span.to);
}

function chooseClip(clip: TimelineClip): void {
  selected = { track: clip.track, index: clip.index };
  selectPath(`tracks[${clip.track}].clips[${clip.index}]`);
  draw();
}

/** The merge fields of the document, as a form beside it (redrawn only when the fields change). */
function showMergeFields(): void {
  const document = analysis.mapped?.value;
  const fields: TemplateField[] =
    document && typeof document === 'object' && !Array.isArray(document)
      ? templateInfo('', document as Record<string, unknown>).merge
      : [];
  const shape = JSON.stringify(fields);
  if (shape === mergeShape || (!analysis.mapped && analysis.text.trim() !== '')) return;
  mergeShape = shape;
  mergeControls.clear();
  const controls = fields.map((field) => {
    const label = `${field.name}${field.default !== undefined ? ` (default: ${field.default})` : ''}`;
    let control: Field & { input: HTMLInputElement | HTMLTextAreaElement };
    if (field.kind === 'url')
      control = urlField(field.name, label, { list: false, required: field.default === undefined });
    else {
      const id = newId(field.name);
      const input = el('input', {
        attrs: {
          id,
          name: field.name,
          type: field.kind === 'number' ? 'number' : 'text',
          step: 'any',
          ...(field.default !== undefined ? { placeholder: field.default } : {}),
        },
      });
      control = {
        input,
        element: el('div', { class: 'field' }, el('label', { attrs: { for: id } }, label), input),
        value: () => input.value,
      };
    }
    control.input.value = mergeValues.get(field.name) ?? '';
    control.input.addEventListener('input', () => {
      mergeValues.set(field.name, control.input.value);
      schedule();
    });
    mergeControls.set(field.name, control);
    return control.element;
  });
  replace(page.mergeFields, ...(controls.length > 0 ? controls : [el('p', {}, 'This document has no merge fields.')]));
}

/** Opens a template of the server in the editor. */
async function openTemplate(name: string): Promise<void> {
  const template = await callJson<{ description: string; edit: unknown }>(`templates/${encodeURIComponent(name)}`);
  page.templateDescription.textContent = template.description;
  mergeValues.clear();
  mergeShape = '';
  server = undefined;
  drawn = undefined;
  selected = undefined;
  editor.load(`${JSON.stringify(template.edit, null, 2)}\n`);
}

async function loadTemplates(): Promise<void> {
  const { templates } = await callJson<{ templates: TemplateSummary[] }>('templates/');
  replace(
    page.templateSelect,
    el('option', { attrs: { value: '' } }, templates.length > 0 ? '(choose a template)' : '(this server has none)'),
    ...templates.map((template) =>
      el('option', { attrs: { value: template.name } }, `${template.name}: ${template.description}`),
    ),
  );
}

page.templateOpen.addEventListener('click', () => {
  if (page.templateSelect.value) openTemplate(page.templateSelect.value).catch(report);
});

page.renderButton.addEventListener('click', () => {
  if (!analysis.mapped) return;
  page.renderButton.disabled = true;
  callJson<{ job_id: string }>('render/', jsonBody({ edit: analysis.mapped.value, merge: values() }, true))
    .then((accepted) => started(accepted.job_id, 'render'))
    .catch(report)
    .finally(() => draw());
});

function started(jobId: string, name: string): void {
  jobList.started(jobId);
  jobPanel.follow(jobId, name);
  void jobList.refresh().catch(report);
}

page.refreshJobs.addEventListener('click', () => void jobList.refresh().catch(report));

page.operation.addEventListener('change', () => {
  const operation = operations.find((candidate) => candidate.name === page.operation.value);
  if (operation) drawOperationForm(page.operationForm, operation, started);
  else replace(page.operationForm);
});

/** An error of the page's own calls, told where the job's outcome goes (a 401 asks for the key instead). */
function report(error: unknown): void {
  if (error instanceof ApiError && error.status === 401) return;
  replace(page.job, el('p', { class: 'error', attrs: { role: 'alert' } }, (error as Error).message));
}

function showKeyState(): void {
  const key = apiKey.get();
  replace(
    page.keyState,
    key ? 'API key: set for this tab ' : 'No API key given ',
    key
      ? el(
          'button',
          { attrs: { type: 'button' }, on: { click: () => (apiKey.clear(), showKeyState(), void start()) } },
          'Forget it',
        )
      : null,
  );
}

window.addEventListener(AUTH_EVENT, (event) => {
  page.keyMessage.textContent = apiKey.get()
    ? `The server refused this key (${String((event as CustomEvent).detail)}): give another.`
    : 'This server needs an API key.';
  page.keyForm.hidden = false;
  page.keyInput.focus();
});

page.keyForm.addEventListener('submit', (event) => {
  event.preventDefault();
  apiKey.set(page.keyInput.value.trim());
  page.keyInput.value = '';
  page.keyForm.hidden = true;
  void start();
});

/** Reads what the page needs of the server: the schemas (open), then the templates and jobs (with the key). */
async function start(): Promise<void> {
  showKeyState();
  try {
    if (!schema) {
      const response = await fetch(apiUrl('openapi.json'));
      const document = (await response.json()) as Parameters<typeof operationsOf>[0];
      schema = editSchemaOf(document);
      operations = operationsOf(document);
      replace(
        page.operation,
        el('option', { attrs: { value: '' } }, '(choose an operation)'),
        ...operations.map((operation) =>
          el('option', { attrs: { value: operation.name } }, `${operation.name}: ${operation.summary}`),
        ),
      );
      check();
    }
    await loadTemplates();
    await jobList.refresh();
  } catch (error) {
    report(error);
  }
}

void start();
