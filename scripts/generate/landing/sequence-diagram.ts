/**
 * A tiny sequence-diagram language rendered to inline SVG, so diagrams need no external tool,
 * script or font. One statement per line:
 *
 *   participant Miniapp server        (optional; fixes the column order)
 *   Miniapp server -> Minibridge: E1 createOrderPayment     (a call: solid arrow)
 *   Minibridge --> Miniapp server: order_payment_id         (a reply: dashed arrow)
 *   Host app -> Host app: shows the payment sheet           (a step of its own: a loop)
 *   # a comment
 *
 * Participants appear as columns in the order they are first named.
 */

interface Message {
  from: number;
  to: number;
  label: string;
  reply: boolean;
}

interface Diagram {
  participants: string[];
  messages: Message[];
}

const messagePattern = /^(.+?)\s*(-->|->)\s*(.+?)\s*:\s*(.+)$/;

export function parseSequence(source: string): Diagram {
  const participants: string[] = [];
  const columnOf = (name: string): number => {
    const known = participants.indexOf(name);
    if (known >= 0) return known;
    participants.push(name);
    return participants.length - 1;
  };
  const messages: Message[] = [];
  source.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    if (line.startsWith('participant ')) {
      columnOf(line.slice('participant '.length).trim());
      return;
    }
    const match = messagePattern.exec(line);
    if (!match) throw new Error(`sequence diagram line ${index + 1}: expected "A -> B: label", got "${line}"`);
    const [, from = '', arrow, to = '', label = ''] = match;
    messages.push({ from: columnOf(from), to: columnOf(to), label, reply: arrow === '-->' });
  });
  if (messages.length === 0) throw new Error('sequence diagram has no messages');
  return { participants, messages };
}

// Layout constants (px). Text width is estimated, as no font metrics are available offline.
const charWidth = 7.2;
const minGap = 120;
const boxHeight = 34;
const boxPadding = 14;
const rowHeight = 38;
const margin = 16;
const selfLoopWidth = 28;

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const textWidth = (text: string): number => Math.ceil(text.length * charWidth);

/**
 * Lifeline positions: each pair of neighbours starts far enough apart for their name boxes, then
 * every message widens the gaps it spans (evenly, shortest spans first) until its label fits.
 */
function columnPositions(diagram: Diagram): number[] {
  const boxWidths = diagram.participants.map((name) => textWidth(name) + 2 * boxPadding);
  const gaps = boxWidths.slice(1).map((width, index) => Math.max(minGap, ((boxWidths[index] ?? 0) + width) / 2 + 12));
  const bySpan = [...diagram.messages].sort((a, b) => Math.abs(a.to - a.from) - Math.abs(b.to - b.from));
  for (const message of bySpan) {
    if (message.from === message.to) {
      // A self-message's label sits right of its loop, in the gap to the next column.
      if (message.from < gaps.length) gaps[message.from] = Math.max(gaps[message.from] ?? 0, textWidth(message.label) + selfLoopWidth + 24);
      continue;
    }
    const first = Math.min(message.from, message.to);
    const last = Math.max(message.from, message.to);
    const spanned = gaps.slice(first, last);
    const deficit = textWidth(message.label) + 24 - spanned.reduce((sum, gap) => sum + gap, 0);
    if (deficit > 0) for (let gap = first; gap < last; gap += 1) gaps[gap] = (gaps[gap] ?? 0) + deficit / spanned.length;
  }
  const start = margin + (boxWidths[0] ?? 0) / 2;
  return [start, ...gaps.map((_, index) => start + gaps.slice(0, index + 1).reduce((sum, gap) => sum + gap, 0))].map(Math.round);
}

export function renderSequenceSvg(source: string, title: string): string {
  const diagram = parseSequence(source);
  const { participants, messages } = diagram;
  const positions = columnPositions(diagram);
  const x = (column: number): number => positions[column] ?? 0;
  const lastBox = textWidth(participants[participants.length - 1] ?? '') + 2 * boxPadding;
  const selfLabelEnds = messages.filter((m) => m.from === m.to).map((m) => x(m.from) + selfLoopWidth + 8 + textWidth(m.label) + margin);
  const width = Math.max(x(participants.length - 1) + lastBox / 2 + margin, ...selfLabelEnds);
  const firstRow = margin + boxHeight + rowHeight;
  const lifelineEnd = firstRow + messages.length * rowHeight - rowHeight / 2;
  const height = lifelineEnd + boxHeight + margin;

  const boxes = (top: number): string[] =>
    participants.map((name, column) => {
      const boxWidth = textWidth(name) + 2 * boxPadding;
      return (
        `<rect class="actor" x="${x(column) - boxWidth / 2}" y="${top}" width="${boxWidth}" height="${boxHeight}" rx="4"/>` +
        `<text class="actor-name" x="${x(column)}" y="${top + boxHeight / 2 + 4}">${escapeXml(name)}</text>`
      );
    });
  const lifelines = participants.map(
    (_, column) => `<line class="lifeline" x1="${x(column)}" y1="${margin + boxHeight}" x2="${x(column)}" y2="${lifelineEnd}"/>`,
  );
  const arrows = messages.map((message, row) => {
    const y = firstRow + row * rowHeight;
    const x1 = x(message.from);
    const x2 = x(message.to);
    if (x1 === x2) {
      const bottom = y + 10;
      return (
        `<path class="${message.reply ? 'reply' : 'call'}" fill="none" d="M${x1} ${y - 6} h${selfLoopWidth} v16 h${-selfLoopWidth + 8}"/>` +
        `<path class="head" d="M${x1} ${bottom} l8 -4 l0 8 z"/>` +
        `<text class="label" text-anchor="start" x="${x1 + selfLoopWidth + 6}" y="${y + 2}">${escapeXml(message.label)}</text>`
      );
    }
    const head = x2 > x1 ? -8 : 8;
    return (
      `<line class="${message.reply ? 'reply' : 'call'}" x1="${x1}" y1="${y}" x2="${x2}" y2="${y}"/>` +
      `<path class="head" d="M${x2} ${y} l${head} -4 l0 8 z"/>` +
      `<text class="label" x="${(x1 + x2) / 2}" y="${y - 6}">${escapeXml(message.label)}</text>`
    );
  });

  return [
    `<svg class="sequence" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(title)}">`,
    `<title>${escapeXml(title)}</title>`,
    ...lifelines,
    ...boxes(margin),
    ...boxes(lifelineEnd),
    ...arrows,
    '</svg>',
  ].join('\n');
}
