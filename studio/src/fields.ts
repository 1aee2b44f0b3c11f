import { callJson } from './api.js';
import { el } from './dom.js';

/**
 * Form fields: a URL field takes a dropped file (or one chosen with its file button), uploads it through
 * `POST /files/` and puts the URL the server gives it in the field; a list of URLs takes several, one a line.
 */

let fieldCount = 0;
/** A new id for a control and its label. */
export const newId = (name: string): string => `f${++fieldCount}-${name.replace(/[^A-Za-z0-9_-]/g, '')}`;

/** A field's value: what it holds, read as the API takes it. */
export interface Field {
  element: HTMLElement;
  /** The value to send, or undefined when the field is left empty. */
  value(): unknown;
}

/** Uploads files through `POST /files/`; answers their URLs, in order. */
async function upload(files: FileList | File[]): Promise<string[]> {
  const form = new FormData();
  for (const file of files) form.append('file', file, file.name);
  const answer = await callJson<{ files: Array<{ url: string }> }>('files/', { method: 'POST', body: form });
  return answer.files.map((file) => file.url);
}

/** A URL field (or a list of URLs, one a line) that takes files dropped on it. */
export function urlField(
  name: string,
  label: string,
  options: { list: boolean; required: boolean; hint?: string },
): Field & {
  input: HTMLInputElement | HTMLTextAreaElement;
} {
  const id = newId(name);
  const input = options.list
    ? el('textarea', { attrs: { id, name, rows: '3', placeholder: 'One URL a line, or drop files here' } })
    : el('input', { attrs: { id, name, type: 'url', placeholder: 'https://… or drop a file here' } });
  if (options.required) input.required = true;
  const status = el('span', { class: 'upload-status', attrs: { 'aria-live': 'polite' } });
  const put = async (files: FileList | File[]) => {
    if (files.length === 0) return;
    status.textContent = `Uploading ${[...files].map((file) => file.name).join(', ')}…`;
    input.setAttribute('aria-busy', 'true');
    try {
      const urls = await upload(options.list ? files : [files[0]!]);
      input.value = options.list
        ? [...input.value.split('\n').filter((line) => line.trim()), ...urls].join('\n')
        : urls[0]!;
      status.textContent = `Uploaded: ${urls.length} file${urls.length > 1 ? 's' : ''}`;
      input.dispatchEvent(new Event('input', { bubbles: true }));
    } catch (error) {
      status.textContent = `Upload refused: ${(error as Error).message}`;
    } finally {
      input.removeAttribute('aria-busy');
    }
  };
  input.addEventListener('dragover', (event) => {
    event.preventDefault();
    input.classList.add('dropping');
  });
  input.addEventListener('dragleave', () => input.classList.remove('dropping'));
  input.addEventListener('drop', (event) => {
    event.preventDefault();
    input.classList.remove('dropping');
    const files = (event as DragEvent).dataTransfer?.files;
    if (files) void put(files);
  });
  const picker = el('input', {
    attrs: { type: 'file', id: `${id}-file`, ...(options.list ? { multiple: '' } : {}) },
    on: { change: () => void put(picker.files ?? []) },
  });
  const element = el(
    'div',
    { class: 'field url-field' },
    el('label', { attrs: { for: id } }, label),
    options.hint ? el('small', {}, options.hint) : null,
    input,
    el('label', { class: 'file-label', attrs: { for: `${id}-file` } }, 'or upload a file: ', picker),
    status,
  );
  return {
    element,
    input,
    value: () => {
      const lines = input.value
        .split(/[\n,]/)
        .map((line) => line.trim())
        .filter(Boolean);
      if (lines.length === 0) return undefined;
      return options.list ? lines : lines[0];
    },
  };
}
