// Package trace reads a production trace into rows to replay: each
// row's offset from the trace's earliest row, its prompt and output
// sizes in tokens, and (Mooncake) its prompt's hash blocks, (BurstGPT)
// its model. Formats (Read, --replay-format), each built to its
// published definition:
//
//   - azure: the Azure LLM inference traces (Azure/AzurePublicDataset,
//     AzureLLMInferenceDataset2023 and 2024): a CSV with columns
//     TIMESTAMP, ContextTokens, GeneratedTokens; a timestamp is a date
//     and time with up to nine decimals of a second (the files have
//     seven), `T` or a space between them, and an optional zone (`Z`,
//     ±HH:MM, ±HHMM, ±HH; none is UTC).
//   - burstgpt: BurstGPT (HPMLL/BurstGPT): a CSV with columns Timestamp
//     (seconds), Model, Request tokens, Response tokens, Total tokens,
//     Log Type. Its failed requests have Response tokens 0.
//   - mooncake: the Mooncake trace (kvcache-ai/Mooncake): JSON lines with
//     timestamp (ms), input_length, output_length and hash_ids (the ids
//     of the prompt's 512-token blocks; rows sharing an id share that
//     block).
//   - ptuprobe: a ptuprobe results file: each first attempt (attempt 1)
//     at its intended time, its prompt the tool's count of what it sent
//     (prompt_tokens_sent) or else the target's (prompt_tokens), its
//     output max_tokens (a row without one: the file's mean, else
//     ptuprobe's defaults; Trace.Unsized counts them). A file's timelines (a run's shape and group)
//     are laid end to end, one mean gap apart, as the policy lab always
//     replayed them (results.ReadTimelines reads them).
//   - auto (the default): a CSV by its header (the results header, else
//     the columns above), JSON lines by the keys of the first object.
//
// What real files hold is taken as it comes: rows in any order (each
// row's offset is from the earliest), columns in any order with extra
// ones ignored, header names in any case, a UTF-8 byte order mark, CRLF
// line ends, blank lines, quoted cells. Bounds (so a file never takes
// unbounded memory or time): MaxBytes, MaxLine, MaxRows, MaxHashIDs,
// MaxSpan. Token counts are whole numbers (a CSV's 308.0 is 308); a
// count above MaxTokens is clipped to it, a prompt of 0 becomes 1 (both
// counted in Trace.Clipped), an output of 0 (BurstGPT's failed requests:
// the request was still offered) becomes 1 (Trace.ZeroOutput); a
// negative count, a missing cell or a timestamp that does not read is a
// bad row: an *Error naming the file, the line and why, and the file is
// refused. A file no format recognizes is an *Error too (Line 0).
//
// trace imports results (the one reader of a recorded run) and nothing
// else of ptuprobe but internal/rowdecode's CSV splitter.
package trace
