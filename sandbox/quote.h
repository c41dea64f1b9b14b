// Quoting of untrusted text (paths, URLs) for error messages.
//
// Messages end up in JSON envelopes and traces, so they must be valid UTF-8 and show exactly which
// bytes the caller sent. Quote() renders text as Python's repr would for a str: single quotes,
// backslash escapes for quotes, backslashes and control bytes, \xNN for bytes that are not valid
// UTF-8; valid multi-byte UTF-8 (a Chinese file name) passes unchanged.
//
// Thread-safety: pure functions; safe from any thread. Not async-signal-safe (allocates).
#ifndef SANDBOX_QUOTE_H_
#define SANDBOX_QUOTE_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace sandbox {

// `text` in single quotes with unsafe bytes escaped. Input longer than `max_bytes` is cut there and
// the quote ends in "...", so a 1 MB path cannot make a 1 MB message.
std::string Quote(absl::string_view text, size_t max_bytes = 256);

// Length of the well-formed UTF-8 sequence (RFC 3629) that starts at text[i] (i < text.size()): 1 for
// ASCII, 2 to 4 for a multi-byte character, 0 if the bytes there are not one (an overlong form, a
// surrogate, a code point above U+10FFFF, a sequence cut short or a stray continuation byte).
size_t Utf8SequenceLength(absl::string_view text, size_t i);

// Whether `text` is well-formed UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates
// (U+D800..U+DFFF), nothing above U+10FFFF, no sequence cut short. What Quote keeps unescaped, and
// what a JSON encoder can carry without replacing bytes.
bool IsWellFormedUtf8(absl::string_view text);

// The longest prefix of `text` of at most `max_bytes` that does not end inside a multi-byte
// character: a cut there never splits one. It backs off at most three continuation bytes (a
// character has at most four bytes), so bytes that are not UTF-8 at all still cut near max_bytes.
absl::string_view Utf8Head(absl::string_view text, size_t max_bytes);

}  // namespace sandbox

#endif  // SANDBOX_QUOTE_H_
