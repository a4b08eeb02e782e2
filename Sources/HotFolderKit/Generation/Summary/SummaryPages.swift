import Glibc
import SummaryShim

/// What writing summary pages produced.
public struct SummaryResult: Sendable, Equatable {
    public var pages: Int
    /// Characters drawn as boxes because no installed font covers them; the
    /// service warns about them, since the summary then misses part of a text.
    public var unshownCharacters: Int
}

/// An error from the summary renderer, naming the output it was writing.
public struct SummaryError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case system(errno: Int32)
        case render
        case argument
    }

    public let kind: Kind
    public let message: String
    public let file: String

    init(_ error: hs_error, file: String) {
        message = withUnsafeBytes(of: error.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        self.file = file
        switch Int(error.status) {
        case Int(HS_E_SYSTEM.rawValue): kind = .system(errno: error.sys_errno)
        case Int(HS_E_ARGUMENT.rawValue): kind = .argument
        default: kind = .render
        }
    }

    public var description: String { "\(file): \(message)" }
}

/// The pages `annotations = summary` appends: a heading, then every
/// annotation with page, type, author, date and text, in any script an
/// installed font covers.
public enum SummaryPages {
    /// A text longer than this is shortened on the page (the annotation list
    /// keeps it whole): a hostile or broken PDF must not turn one annotation
    /// into thousands of pages.
    static let maximumTextLength = 50_000

    /// Writes the summary of `records` as a PDF of pages `pageWidth` ×
    /// `pageHeight` points to `output`, from its current offset.
    public static func write(_ records: [AnnotationRecord], title: String, pageWidth: Double, pageHeight: Double,
                             to output: FileDescriptor) throws(SummaryError) -> SummaryResult {
        let headings = records.map(heading)
        let texts = records.map { $0.text.map(shortened) }
        let pageCount = Set(records.map(\.page)).count
        let subtitle = records.isEmpty
            ? "No annotations on the selected pages"
            : "\(counted(records.count, "annotation")) on \(counted(pageCount, "page"))"

        var error = hs_error()
        var result = hs_result()
        let status: Int32 = withCStrings(headings) { headingPointers in
            withCStrings(texts) { textPointers in
                var entries = zip(headingPointers, textPointers).map { hs_entry(heading: $0, text: $1) }
                return "Annotations — \(title)".withCString { titlePointer in
                    subtitle.withCString { subtitlePointer in
                        output.path.withCString { description in
                            var layout = hs_layout()
                            layout.width = pageWidth
                            layout.height = pageHeight
                            layout.title = titlePointer
                            layout.subtitle = subtitlePointer
                            layout.metadata_title = titlePointer
                            layout.output_description = description
                            return entries.withUnsafeMutableBufferPointer { buffer in
                                hs_render_summary(buffer.baseAddress, buffer.count, &layout, output.rawValue, &result, &error)
                            }
                        }
                    }
                }
            }
        }
        guard status == 0 else { throw SummaryError(error, file: output.path) }
        return SummaryResult(pages: Int(result.pages), unshownCharacters: Int(result.unshown_characters))
    }

    /// "Page 3 · Highlight · Jane Doe · 2024-05-01 14:03"
    static func heading(_ record: AnnotationRecord) -> String {
        var parts = ["Page \(record.page)", displayName(record.type)]
        // Isolated, so that a right-to-left name does not pull the separators
        // and the date into its run.
        if let subject = nonEmpty(record.subject),
           subject.lowercased() != record.type.lowercased(), subject.lowercased() != displayName(record.type).lowercased() {
            parts.append(isolated(subject))
        }
        if let author = nonEmpty(record.author) { parts.append(isolated(author)) }
        if let date = nonEmpty(record.date) { parts.append(displayDate(date)) }
        return parts.joined(separator: " · ")
    }

    /// Readers know a sticky note as a note and a FreeText as a text box;
    /// the other subtypes read well as they are.
    static func displayName(_ type: String) -> String {
        switch type {
        case "Text": "Note"
        case "FreeText": "Text box"
        case "StrikeOut": "Strikeout"
        case "FileAttachment": "File attachment"
        case "PolyLine": "Polyline"
        default: type
        }
    }

    /// "2024-05-01T14:03:12+02:00" as "2024-05-01 14:03": the time as the
    /// author's clock showed it. Anything else is shown as the PDF gave it.
    static func displayDate(_ date: String) -> String {
        let characters = Array(date)
        guard characters.count >= 16, characters[10] == "T",
              characters[0..<10].allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }) else {
            return date
        }
        return String(characters[0..<10]) + " " + String(characters[11..<16])
    }

    static func shortened(_ text: String) -> String {
        guard text.count > maximumTextLength else { return text }
        let rest = text.count - maximumTextLength
        return String(text.prefix(maximumTextLength)) + " … (\(counted(rest, "more character")) not shown)"
    }

    private static func counted(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(n) \(noun)s" }

    private static func nonEmpty(_ s: String?) -> String? {
        guard let s, s.contains(where: { !$0.isWhitespace }) else { return nil }
        return s
    }

    private static func isolated(_ s: String) -> String { "\u{2068}" + s + "\u{2069}" }
}

/// Calls body with C strings for `strings` (nil stays NULL), valid during the call.
private func withCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    // strdup'd copies: nesting one withCString per element would recurse once per annotation.
    let copies = strings.map { $0.flatMap { strdup($0) } }
    defer { copies.forEach { free($0) } }
    return body(copies.map { $0.map { UnsafePointer($0) } })
}
