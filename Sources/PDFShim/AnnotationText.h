// Text helpers for the annotation list: no qpdf types, so they can be tested
// and fuzzed on their own.
#ifndef HOTFOLDER_ANNOTATIONTEXT_H
#define HOTFOLDER_ANNOTATIONTEXT_H

#include <string>

namespace hf {

// Whether s is well-formed UTF-8 (no overlong forms, surrogates or values
// above U+10FFFF).
bool is_valid_utf8(std::string const &s);

// Appends s as a JSON string literal. Every byte that is not part of a
// well-formed UTF-8 sequence becomes U+FFFD, so the result always parses.
void append_json_string(std::string &out, std::string const &s);

// Converts a PDF date ("D:YYYYMMDDHHmmSSOHH'mm'", everything after the year
// optional) to ISO 8601 with the precision the PDF gave. Returns false, and
// leaves iso alone, when pdf is not such a date.
bool pdf_date_to_iso8601(std::string const &pdf, std::string &iso);

} // namespace hf

#endif
