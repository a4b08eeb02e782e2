#include "AnnotationText.h"

#include <cstdio>

namespace hf {

namespace {

// Length of the well-formed UTF-8 sequence at s[i], or 0 if there is none.
size_t utf8_sequence_length(std::string const &s, size_t i) {
    unsigned char const c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
        return 1;
    }
    size_t length;
    unsigned long cp;
    unsigned long min;
    if ((c & 0xE0) == 0xC0) {
        length = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        length = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        length = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (i + length > s.size()) {
        return 0;
    }
    for (size_t k = 1; k < length; ++k) {
        unsigned char const cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    return length;
}

bool digits(std::string const &s, size_t at, size_t count, int &value) {
    if (at + count > s.size()) {
        return false;
    }
    value = 0;
    for (size_t k = at; k < at + count; ++k) {
        if (s[k] < '0' || s[k] > '9') {
            return false;
        }
        value = value * 10 + (s[k] - '0');
    }
    return true;
}

int days_in_month(int year, int month) {
    static int const days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool const leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

} // namespace

bool is_valid_utf8(std::string const &s) {
    for (size_t i = 0; i < s.size();) {
        size_t const n = utf8_sequence_length(s, i);
        if (n == 0) {
            return false;
        }
        i += n;
    }
    return true;
}

void append_json_string(std::string &out, std::string const &s) {
    out += '"';
    for (size_t i = 0; i < s.size();) {
        size_t const n = utf8_sequence_length(s, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
            continue;
        }
        if (n > 1) {
            out.append(s, i, n);
            i += n;
            continue;
        }
        char const c = s[i++];
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
                char buffer[8];
                std::snprintf(buffer, sizeof(buffer), "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                out += buffer;
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

bool pdf_date_to_iso8601(std::string const &pdf, std::string &iso) {
    // Producers pad with spaces and NULs, and many drop the "D:" or the
    // apostrophes the specification asks for; a reader that insisted on the
    // exact form would show most real dates raw.
    size_t begin = 0;
    size_t end = pdf.size();
    while (begin < end && (pdf[begin] == ' ' || pdf[begin] == '\0')) {
        ++begin;
    }
    while (end > begin && (pdf[end - 1] == ' ' || pdf[end - 1] == '\0')) {
        --end;
    }
    std::string const s = pdf.substr(begin, end - begin);
    size_t at = s.compare(0, 2, "D:") == 0 ? 2 : 0;

    int year;
    if (!digits(s, at, 4, year)) {
        return false;
    }
    at += 4;
    // Month, day, hour, minute, second: each optional, but only in order.
    int fields[5] = {0, 0, 0, 0, 0};
    int given = 0;
    while (given < 5 && digits(s, at, 2, fields[given])) {
        at += 2;
        ++given;
    }
    int const month = fields[0], day = fields[1], hour = fields[2], minute = fields[3], second = fields[4];
    if ((given >= 1 && (month < 1 || month > 12)) || (given >= 2 && (day < 1 || day > days_in_month(year, month))) ||
        (given >= 3 && hour > 23) || (given >= 4 && minute > 59) || (given >= 5 && second > 59)) {
        return false;
    }

    std::string zone;
    if (at < s.size()) {
        char const sign = s[at++];
        if (sign == 'Z' || sign == 'z') {
            zone = "Z";
            // Some write "Z00'00'": an offset of zero in words and digits.
            int zh = 0, zm = 0;
            if (digits(s, at, 2, zh)) {
                at += 2;
                if (at < s.size() && s[at] == '\'') {
                    ++at;
                }
                if (digits(s, at, 2, zm)) {
                    at += 2;
                }
                if (zh != 0 || zm != 0) {
                    return false;
                }
            }
        } else if (sign == '+' || sign == '-') {
            int zh, zm = 0;
            if (!digits(s, at, 2, zh) || zh > 23) {
                return false;
            }
            at += 2;
            if (at < s.size() && s[at] == '\'') {
                ++at;
            }
            if (digits(s, at, 2, zm)) {
                at += 2;
                if (zm > 59) {
                    return false;
                }
            }
            char buffer[8];
            std::snprintf(buffer, sizeof(buffer), "%c%02d:%02d", sign, zh, zm);
            zone = buffer;
        } else {
            return false;
        }
        if (at < s.size() && s[at] == '\'') {
            ++at;
        }
        if (at != s.size()) {
            return false;
        }
    }

    char buffer[40];
    switch (given) {
    case 0: std::snprintf(buffer, sizeof(buffer), "%04d", year); break;
    case 1: std::snprintf(buffer, sizeof(buffer), "%04d-%02d", year, month); break;
    case 2: std::snprintf(buffer, sizeof(buffer), "%04d-%02d-%02d", year, month, day); break;
    // An hour alone is not an ISO 8601 time of day; minutes default to zero as in PDF.
    case 3:
    case 4: std::snprintf(buffer, sizeof(buffer), "%04d-%02d-%02dT%02d:%02d", year, month, day, hour, minute); break;
    default: std::snprintf(buffer, sizeof(buffer), "%04d-%02d-%02dT%02d:%02d:%02d", year, month, day, hour, minute, second); break;
    }
    iso = buffer;
    // A zone without a time of day says nothing ISO 8601 can carry.
    if (given >= 3) {
        iso += zone;
    }
    return true;
}

} // namespace hf
