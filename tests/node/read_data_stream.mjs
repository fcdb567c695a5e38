// ai 4's own reader of the data stream protocol (processDataStream, which parses each line with
// parseDataStreamPart), for tests/dialects/test_vercel_node.py: what each file named on the command
// line tells its callbacks. Prints {path: {text, reasoning, toolCalls, finishReason, usage, errors,
// messageIds, error}} as JSON; `error` is what the reader threw, if it did.
import { readFileSync } from 'node:fs';
import { processDataStream } from 'ai-v4';

async function read(path) {
  const bytes = new Uint8Array(readFileSync(path));
  const stream = new ReadableStream({ start(controller) { controller.enqueue(bytes); controller.close(); } });
  const out = { text: '', reasoning: '', toolCalls: [], streamed: {}, finishReason: null, usage: null, errors: [],
                messageIds: [], error: null };
  try {
    await processDataStream({
      stream,
      onTextPart: (value) => { out.text += value; },
      onReasoningPart: (value) => { out.reasoning += value; },
      onToolCallStreamingStartPart: (value) => { out.streamed[value.toolCallId] = { toolName: value.toolName, args: '' }; },
      onToolCallDeltaPart: (value) => { out.streamed[value.toolCallId].args += value.argsTextDelta; },
      onToolCallPart: (value) => { out.toolCalls.push(value); },
      onErrorPart: (value) => { out.errors.push(value); },
      onStartStepPart: (value) => { out.messageIds.push(value.messageId); },
      onFinishMessagePart: (value) => { out.finishReason = value.finishReason; out.usage = value.usage; },
    });
  } catch (e) {
    out.error = String(e?.message ?? e);
  }
  return out;
}

const result = {};
for (const path of process.argv.slice(2)) result[path] = await read(path);
process.stdout.write(JSON.stringify(result));
