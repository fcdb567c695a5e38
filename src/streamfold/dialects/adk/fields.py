"""Every field of ADK's `Event`, of its `actions` and of a content part, as `/run_sse` serves them, and what
the fold does with each: folded into the Result, kept in `native`, or named and left (with why).
tests/sdk/test_sdk_adk.py reads the fields from google-adk at test time, so a field a new ADK version adds
fails there until it is named here."""

from __future__ import annotations

__all__ = ["ACTIONS", "EVENT", "PART"]

EVENT = {
    # Folded.
    "content": "folded: text, thoughts, function calls and responses", "partial": "folded: the aggregate check",
    "finishReason": "folded", "errorCode": "folded: an in-stream error", "errorMessage": "folded",
    "usageMetadata": "folded", "modelVersion": "folded", "invocationId": "folded: the id", "id": "folded: "
    "the event id ties partials to their aggregate", "author": "folded: the lane", "actions": "folded (ACTIONS)",
    "longRunningToolIds": "folded: a final response (is_final_response); kept", "branch": "kept",
    "interrupted": "kept", "turnComplete": "kept",
    # Named and left: the live (`/run_live`) session's, not an SSE run's.
    "turnCompleteReason": "live only", "interactionStatus": "live only", "liveSessionResumptionUpdate": "live only",
    "liveSessionId": "live only", "goAway": "live only", "voiceActivity": "live only",
    "inputTranscription": "live only", "outputTranscription": "live only",
    # Named and left: about the reply, not of it.
    "groundingMetadata": "search grounding, not the reply", "citationMetadata": "citations, not the reply",
    "avgLogprobs": "scores", "logprobsResult": "scores", "cacheMetadata": "context cache bookkeeping",
    "customMetadata": "the application's own labels", "interactionId": "the Interactions API's chain id",
    "environmentId": "a sandbox's id", "output": "a workflow node's output value", "nodeInfo": "the workflow path",
    "isolationScope": "internal (ADK says not to read it)", "timestamp": "when, not what",
}

ACTIONS = {
    "transferToAgent": "folded: a hand-off moves the default lane", "escalate": "kept",
    "stateDelta": "kept (merged)", "skipSummarization": "folded: a final response (is_final_response)",
    "transferReason": "named: why the hand-off", "artifactDelta": "named: artifact versions",
    "requestedAuthConfigs": "named: a tool's auth request",
    "requestedToolConfirmations": "named: a confirmation request",
    "compaction": "named: session compaction", "endOfAgent": "named: workflow bookkeeping",
    "agentState": "named: workflow checkpoint", "rewindBeforeInvocationId": "named: a rewind",
    "route": "named: a workflow edge", "renderUiWidgets": "named: UI widgets",
    "setModelResponse": "named: structured output",
}

PART = {
    "text": "folded", "thought": "folded: reasoning", "functionCall": "folded: a tool call",
    "functionResponse": "folded: the call's result (native)",
    "thoughtSignature": "named: ADK keeps it in its session; a `/run_sse` client sends none back",
    "executableCode": "kept whole", "codeExecutionResult": "kept whole", "inlineData": "kept whole",
    "fileData": "kept whole", "toolCall": "kept whole", "toolResponse": "kept whole",
    "videoMetadata": "named: of a media part", "mediaResolution": "named: of a media part",
    "partMetadata": "named: the application's", "audioTranscription": "named: live only",
    "mediaProcessing": "named: of a media part", "speechMetadata": "named: live only",
}
