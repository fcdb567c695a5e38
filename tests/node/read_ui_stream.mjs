// The ai package's own reader of a UI message stream, for tests/dialects/test_vercel_node.py:
// each file named on the command line is parsed as the SDK's chat transport parses a response
// (parseJsonEventStream with uiMessageChunkSchema) and read into UIMessages (readUIMessageStream).
// The package is `ai` (ai 6), or the one AI_PACKAGE names (`ai-v7`).
// Prints {path: {message: the last UIMessage or null, error: the reader's error or null}} as JSON.
import { readFileSync } from 'node:fs';

const { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } = await import(
  process.env.AI_PACKAGE ?? 'ai'
);

async function read(path) {
  const bytes = new Uint8Array(readFileSync(path));
  const body = new ReadableStream({ start(controller) { controller.enqueue(bytes); controller.close(); } });
  const chunks = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(part, controller) {
        if (!part.success) throw part.error;
        controller.enqueue(part.value);
      },
    }),
  );
  let message = null;
  let error = null;
  try {
    for await (const update of readUIMessageStream({ stream: chunks, onError: (e) => { error ??= String(e?.message ?? e); } })) {
      message = update;
    }
  } catch (e) {
    error ??= String(e?.message ?? e);
  }
  return { message, error };
}

const out = {};
for (const path of process.argv.slice(2)) out[path] = await read(path);
process.stdout.write(JSON.stringify(out));
