/**
 * Elements made from data without HTML: text goes in as text nodes and attributes as attributes, never through
 * innerHTML, so nothing a document or an answer holds can become markup or script.
 */

type Child = Node | string | number | null | undefined | false;

export interface Props {
  class?: string;
  /** Attributes, set as they are (`aria-label`, `for`, `data-track`). */
  attrs?: Record<string, string>;
  /** Listeners, by event name. */
  on?: Record<string, (event: Event) => void>;
}

/** A new element with attributes, listeners and children. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.class) element.className = props.class;
  for (const [name, value] of Object.entries(props.attrs ?? {})) element.setAttribute(name, value);
  for (const [name, listener] of Object.entries(props.on ?? {})) element.addEventListener(name, listener);
  append(element, ...children);
  return element;
}

/** Appends children, strings as text. */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children)
    if (child !== null && child !== undefined && child !== false)
      parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** The element of an id the page's HTML has, of the type expected. */
export function byId<T extends HTMLElement>(id: string, type: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`The page has no ${type.name} #${id}`);
  return found;
}
