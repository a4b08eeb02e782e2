import Foundation

/// A file-name template such as `{title|stem} {date}.pdf` (the seed's
/// "file name for generated file" hook, in configuration form).
public struct NameTemplate: Sendable, Hashable, CustomStringConvertible {
    public enum Placeholder: String, Sendable, CaseIterable {
        case stem, ext, title, folder, date, time
        /// The document's number of pages.
        case pages
        /// A per-folder counter, 1, 2, 3, … (kept across restarts).
        case n
        /// The page an image file shows (image output), zero-padded to sort.
        case page
    }

    enum Piece: Sendable, Hashable {
        case text(String)
        /// Alternatives: the first that has a non-empty value is used.
        case value([Placeholder])
    }

    let pieces: [Piece]
    public let source: String

    public var description: String { source }

    public init(parsing source: String) throws(ConfigurationMessage) {
        self.source = source
        var pieces: [Piece] = []
        var text = ""
        var index = source.startIndex
        while index < source.endIndex {
            let c = source[index]
            if c == "{" {
                guard let close = source[index...].firstIndex(of: "}") else {
                    throw ConfigurationMessage("unclosed { in name template \"\(source)\"")
                }
                let inner = source[source.index(after: index)..<close]
                var alternatives: [Placeholder] = []
                for name in inner.split(separator: "|", omittingEmptySubsequences: false) {
                    let trimmed = name.trimmingCharacters(in: .whitespaces)
                    guard let placeholder = Placeholder(rawValue: trimmed) else {
                        let known = Placeholder.allCases.map { "{\($0.rawValue)}" }.joined(separator: ", ")
                        throw ConfigurationMessage("unknown placeholder {\(trimmed)} in \"\(source)\"; known: \(known)\(Spelling.suggestion(for: trimmed, among: Placeholder.allCases.map(\.rawValue)))")
                    }
                    alternatives.append(placeholder)
                }
                if !text.isEmpty { pieces.append(.text(text)); text = "" }
                pieces.append(.value(alternatives))
                index = source.index(after: close)
            } else if c == "}" {
                throw ConfigurationMessage("unmatched } in name template \"\(source)\"")
            } else {
                text.append(c)
                index = source.index(after: index)
            }
        }
        if !text.isEmpty { pieces.append(.text(text)) }
        self.pieces = pieces
    }

    public func uses(_ placeholder: Placeholder) -> Bool {
        pieces.contains { if case .value(let alts) = $0 { alts.contains(placeholder) } else { false } }
    }

    /// The raw (unsanitized) expansion.
    public func render(_ values: [Placeholder: String]) -> String {
        var out = ""
        for piece in pieces {
            switch piece {
            case .text(let t): out += t
            case .value(let alternatives):
                let chosen = alternatives.lazy.compactMap { values[$0] }.first { !$0.isEmpty }
                out += chosen ?? ""
            }
        }
        return out
    }
}

/// Makes any string safe as a single file name inside a folder the service owns.
public enum FileNameSanitizer {
    /// Bytes left for the base name, so that " (9999)", an extension and a
    /// temporary suffix still fit in the 255-byte limit of Linux file systems.
    public static let maxBaseBytes = 200

    public static func sanitize(_ raw: String, fallback: String = "document") -> String {
        var out = ""
        for scalar in raw.unicodeScalars {
            switch scalar.value {
            case 0x00...0x1F, 0x7F, 0x80...0x9F:
                out.unicodeScalars.append(" ")
            case 0x2F, 0x5C: // '/' and '\' would make a path
                out.unicodeScalars.append("_")
            case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF:
                // Bidirectional overrides disguise a name's real extension.
                continue
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        // Collapse runs of spaces; leading dots would hide the file, trailing dots
        // and spaces confuse Windows clients of a share.
        out = out.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        while let f = out.first, f == "." || f == " " { out.removeFirst() }
        while let l = out.last, l == "." || l == " " { out.removeLast() }
        out = truncate(out, toUTF8Bytes: maxBaseBytes)
        while let l = out.last, l == "." || l == " " { out.removeLast() }
        return out.isEmpty ? fallback : out
    }

    static func truncate(_ s: String, toUTF8Bytes limit: Int) -> String {
        guard s.utf8.count > limit else { return s }
        var result = ""
        var used = 0
        for ch in s {
            let n = String(ch).utf8.count
            if used + n > limit { break }
            result.append(ch)
            used += n
        }
        return result
    }

    /// Splits `name.ext` into stem and extension (without the dot); a leading
    /// dot does not start an extension.
    public static func split(_ name: String) -> (stem: String, ext: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        let ext = String(name[name.index(after: dot)...])
        if ext.isEmpty || ext.utf8.contains(UInt8(ascii: " ")) || ext.utf8.count > 16 { return (name, "") }
        return (String(name[..<dot]), ext)
    }

    /// A sanitized file name from a rendered template, ending in `.ext` (added
    /// unless the rendered name already ends with it).
    public static func fileName(rendered: String, ext: String) -> String {
        var base = rendered
        // "{title}.pdf" with a title "report.pdf" must not give report.pdf.pdf.
        while !ext.isEmpty, base.lowercased().hasSuffix("." + ext.lowercased()) {
            base.removeLast(ext.count + 1)
        }
        let cleanExt = String(sanitize(ext, fallback: "").filter { $0 != " " })
        let cleanBase = sanitize(base)
        return cleanExt.isEmpty ? cleanBase : cleanBase + "." + cleanExt
    }

    /// `name` shortened (its stem, keeping the extension) to at most `limit`
    /// UTF-8 bytes, so that a suffix such as `.error.txt` still fits in 255.
    public static func fitting(_ name: String, limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        let (stem, ext) = split(name)
        let tail = ext.isEmpty ? "" : "." + ext
        let room = max(1, limit - tail.utf8.count)
        return truncate(stem, toUTF8Bytes: room) + tail
    }

    /// `name (2).pdf`, `name (3).pdf`, … for collision renaming.
    public static func numbered(_ name: String, _ n: Int) -> String {
        let (stem, ext) = split(name)
        return ext.isEmpty ? "\(stem) (\(n))" : "\(stem) (\(n)).\(ext)"
    }
}

/// "Did you mean" suggestions for misspelled keys and values.
public enum Spelling {
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// `"; did you mean \"x\"?"` when one candidate is close, else "".
    public static func suggestion(for word: String, among candidates: [String]) -> String {
        let scored = candidates.map { ($0, distance(word.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return "" }
        let limit = max(2, word.count / 3)
        return best.1 <= limit ? "; did you mean \"\(best.0)\"?" : ""
    }
}

extension NameTemplate: Codable {
    public init(from decoder: any Decoder) throws {
        let source = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(parsing: source)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.text))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(source)
    }
}
