/**
 * Server-Sent Events read from a fetched body: `EventSource` cannot send `X-API-Key`, `fetch` can, so the page reads
 * `/jobs/<id>/events` as a stream and parses its events here (the `data:` lines of each event, joined by newlines;
 * comment lines such as `: keep-alive` are skipped).
 */
export class EventStreamParser {
  private buffer = '';
  private data: string[] = [];

  /** Takes the next piece of text; answers the data of every event it completes. */
  push(chunk: string): string[] {
    this.buffer += chunk;
    const events: string[] = [];
    let end: number;
    while ((end = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, end);
      const breakLength = this.buffer.startsWith('\r\n', end) ? 2 : 1;
      // A lone \r at the end may be half of \r\n: wait for the next piece.
      if (this.buffer[end] === '\r' && end + 1 === this.buffer.length) break;
      this.buffer = this.buffer.slice(end + breakLength);
      if (line === '') {
        if (this.data.length > 0) events.push(this.data.join('\n'));
        this.data = [];
      } else if (line.startsWith('data:')) {
        this.data.push(line.slice(line[5] === ' ' ? 6 : 5));
      }
    }
    return events;
  }
}
