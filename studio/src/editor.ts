import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { json } from '@codemirror/lang-json';
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { lintGutter, lintKeymap, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { drawSelection, EditorView, keymap, lineNumbers, placeholder } from '@codemirror/view';

/**
 * The document's editor: CodeMirror 6, in a shadow root of its host element. There its styles are constructed style
 * sheets, which the page's Content-Security-Policy (`style-src 'self'`, no inline style) lets through, where a
 * `<style>` element in the document would need 'unsafe-inline' or a nonce. Tab is left to move the focus on (no
 * indent-with-tab), so the keyboard never gets stuck in it.
 */

export interface Editor {
  view: EditorView;
  text(): string;
  /** Puts a new document in (a template, say): its own undo history starts there. */
  load(text: string): void;
  /** Selects a span and shows it. */
  select(from: number, to: number): void;
  /** The problems underlined now. */
  show(diagnostics: Diagnostic[]): void;
  /** The line (from 1) of a position. */
  lineOf(pos: number): number;
}

const THEME = EditorView.theme({
  '&': { height: '100%', fontSize: '13px', backgroundColor: '#fff' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', overflow: 'auto' },
  '&.cm-focused': { outline: '2px solid #1d4ed8', outlineOffset: '-2px' },
  '.cm-diagnosticText': { whiteSpace: 'pre-wrap' },
  // The lint package draws its underline and gutter mark as data: pictures, which the CSP (img-src 'self') refuses.
  '.cm-lintRange-error': {
    backgroundImage: 'none',
    textDecoration: 'underline wavy #dc2626',
    textDecorationSkipInk: 'none',
    textUnderlineOffset: '3px',
  },
  '.cm-lint-marker-error': {
    content: 'none',
    backgroundColor: '#dc2626',
    borderRadius: '50%',
    transform: 'scale(0.6)',
  },
});

export function createEditor(
  host: HTMLElement,
  handlers: { changed: (text: string) => void; moved: (from: number, to: number) => void },
): Editor {
  const root = host.attachShadow({ mode: 'open' });
  const extensions = [
    lineNumbers(),
    history(),
    drawSelection(),
    bracketMatching(),
    json(),
    syntaxHighlighting(defaultHighlightStyle),
    lintGutter(),
    keymap.of([...defaultKeymap, ...historyKeymap, ...lintKeymap]),
    placeholder('Paste an edit document here, or open a template'),
    EditorView.contentAttributes.of({ 'aria-label': 'The edit document (JSON)' }),
    EditorView.lineWrapping,
    THEME,
    EditorView.updateListener.of((update) => {
      if (update.docChanged) handlers.changed(update.state.doc.toString());
      const { from, to } = update.state.selection.main;
      if (update.selectionSet || update.docChanged) handlers.moved(from, to);
    }),
  ];
  const stateOf = (doc: string) => EditorState.create({ doc, extensions });
  const view = new EditorView({ state: stateOf(''), parent: root, root });
  return {
    view,
    text: () => view.state.doc.toString(),
    load: (text) => {
      view.setState(stateOf(text));
      handlers.changed(text);
    },
    select: (from, to) =>
      view.dispatch({
        selection: { anchor: from, head: to },
        effects: EditorView.scrollIntoView(from, { y: 'center' }),
      }),
    show: (diagnostics) => view.dispatch(setDiagnostics(view.state, diagnostics)),
    lineOf: (pos) => view.state.doc.lineAt(Math.min(pos, view.state.doc.length)).number,
  };
}
