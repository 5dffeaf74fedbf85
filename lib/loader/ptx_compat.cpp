#include "loader/ptx_compat.h"

#include <utility>
#include <array>
#include <cstddef>
#include <string_view>

namespace nvl::loader {

namespace {

constexpr std::string_view kMapF64 = "map_f64_to_f32";
constexpr std::string_view kSpace = " \t\r\f\v";

// The oldest PTX ISA nvJitLink compiles ("-c" needs 3.1).
constexpr unsigned kMinMajor = 3, kMinMinor = 1;
constexpr std::string_view kMinVersion = "3.1";

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// One change to the text: replace [pos, pos+len) with 'with'.
struct Edit {
    size_t pos = 0, len = 0;
    std::string_view with;
};

}  // namespace

bool normalizeLegacyPtxHeader(std::string& ptx) {
    std::array<Edit, 2> edits{};  // at most one for .version, one for map_f64_to_f32
    size_t editCount = 0;
    size_t versionPos = std::string::npos, versionLen = 0;
    unsigned versionMajor = 0, versionMinor = 0;
    bool sawVersion = false, sawTarget = false;

    const std::string_view text(ptx);
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        const size_t lineStart = pos;
        pos = end + 1;
        size_t first = line.find_first_not_of(kSpace);
        if (first == std::string_view::npos) continue;
        std::string_view body = line.substr(first);
        if (body.substr(0, 2) == "//") continue;
        if (body.substr(0, 2) == "/*") {  // a block comment: skip to its end
            size_t close = text.find("*/", lineStart + first + 2);
            if (close == std::string_view::npos) break;
            size_t next = text.find('\n', close);
            pos = next == std::string_view::npos ? text.size() : next + 1;
            continue;
        }
        if (body.substr(0, 8) == ".version" && !sawVersion) {
            sawVersion = true;
            size_t v = body.find_first_not_of(kSpace, 8);
            if (v == std::string_view::npos || v == 8) return false;
            size_t e = v;
            while (e < body.size() && (isDigit(body[e]) || body[e] == '.')) ++e;
            std::string_view number = body.substr(v, e - v);
            if (number.empty() || !isDigit(number[0])) return false;
            // major.minor, each a digit or two; anything longer is not legacy.
            size_t dot = number.find('.');
            if (dot == std::string_view::npos || dot == 0 || dot > 2 || number.size() - dot - 1 > 2 ||
                number.size() == dot + 1)
                return false;
            for (char c : number.substr(0, dot)) versionMajor = versionMajor * 10 + (c - '0');
            for (char c : number.substr(dot + 1)) versionMinor = versionMinor * 10 + (c - '0');
            versionPos = lineStart + first + v;
            versionLen = number.size();
            continue;
        }
        if (body.substr(0, 7) == ".target" && !sawTarget) {
            sawTarget = true;
            size_t cut = body.find("//");
            std::string_view list = body.substr(7, cut == std::string_view::npos ? std::string_view::npos : cut - 7);
            size_t listStart = lineStart + first + 7;
            size_t i = 0;
            while (i < list.size()) {  // entries separated by commas
                size_t comma = list.find(',', i);
                size_t stop = comma == std::string_view::npos ? list.size() : comma;
                std::string_view entry = list.substr(i, stop - i);
                size_t a = entry.find_first_not_of(kSpace);
                if (a != std::string_view::npos) {
                    size_t b = entry.find_last_not_of(kSpace);
                    std::string_view name = entry.substr(a, b - a + 1);
                    if (name == kMapF64 && i > 0) {
                        // Drop ", map_f64_to_f32": from the comma before it to its end.
                        size_t commaBefore = list.rfind(',', i - 1);
                        if (commaBefore != std::string_view::npos && editCount < edits.size())
                            edits[editCount++] = {listStart + commaBefore, i + b + 1 - commaBefore, {}};
                    }
                }
                if (comma == std::string_view::npos) break;
                i = comma + 1;
            }
            continue;
        }
        if (body[0] == '.' && body.substr(0, 13) == ".address_size") continue;
        break;  // the first statement: the header is over
    }

    const bool belowCompileOnly = versionMajor < kMinMajor || (versionMajor == kMinMajor && versionMinor < kMinMinor);
    if (versionPos != std::string::npos && belowCompileOnly && editCount < edits.size())
        edits[editCount++] = {versionPos, versionLen, kMinVersion};
    if (editCount == 0) return false;
    // Apply from the back so that earlier positions stay valid.
    if (editCount == 2 && edits[0].pos < edits[1].pos) std::swap(edits[0], edits[1]);
    for (size_t k = 0; k < editCount; ++k) ptx.replace(edits[k].pos, edits[k].len, edits[k].with);
    return true;
}

}  // namespace nvl::loader
