import Foundation

/// Writes small, valid PDFs from Swift for the tests: N pages that each draw
/// "Page k" in Helvetica, an optional Unicode /Title, optional annotations per
/// page and an optional AcroForm text field with /NeedAppearances true.
///
/// Markers the tests look for in the bytes of a generated output (qpdf keeps
/// unknown dictionary keys, and dictionaries stay uncompressed because these
/// inputs use no object streams):
/// - every page dictionary carries `/HFTestPage (pK)` (K is 1-based);
/// - every annotation carries its `/NM (id)`;
/// - every appearance stream carries `/HFTestAP (id)` in its dictionary, so an
///   appearance that was flattened into the page is still in the file (as a
///   page XObject) while one that was dropped is not.
struct TestPDF {
    struct Flags: OptionSet {
        let rawValue: Int
        static let invisible = Flags(rawValue: 1)
        static let hidden = Flags(rawValue: 2)
        static let print = Flags(rawValue: 4)
        static let noView = Flags(rawValue: 32)
    }

    struct Annotation {
        enum Kind {
            /// A Square annotation WITH an /AP /N appearance stream.
            case square
            /// A FreeText annotation WITH an /AP /N appearance stream.
            case freeText
            /// A Text (sticky note) annotation WITHOUT an appearance stream.
            case text
            /// A Link annotation (URI action, no appearance stream).
            case link
        }

        var kind: Kind
        var flags: Flags
        var id: String

        static func square(_ id: String, flags: Flags = [.print]) -> Annotation { Annotation(kind: .square, flags: flags, id: id) }
        static func freeText(_ id: String, flags: Flags = [.print]) -> Annotation { Annotation(kind: .freeText, flags: flags, id: id) }
        static func text(_ id: String, flags: Flags = [.print]) -> Annotation { Annotation(kind: .text, flags: flags, id: id) }
        static func link(_ id: String, flags: Flags = [.print]) -> Annotation { Annotation(kind: .link, flags: flags, id: id) }

        var hasAppearance: Bool { kind == .square || kind == .freeText }
    }

    var pages: Int
    var title: String?
    /// Annotations by 0-based page index.
    var annotations: [Int: [Annotation]] = [:]
    /// When set, page 1 carries a text-field widget (field name `name`, this
    /// value, no appearance stream) and the catalog an /AcroForm with
    /// /NeedAppearances true.
    var formFieldValue: String?
    /// Extra bytes appended after %%EOF (harmless to readers; makes files unique).
    var trailerComment: String?

    init(pages: Int = 1, title: String? = nil, annotations: [Int: [Annotation]] = [:], formFieldValue: String? = nil) {
        self.pages = pages
        self.title = title
        self.annotations = annotations
        self.formFieldValue = formFieldValue
    }

    // MARK: - writing

    var bytes: [UInt8] {
        var objects = ObjectTable()
        let catalog = objects.reserve()
        let pageTree = objects.reserve()
        let font = objects.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
        let pageNumbers = (0..<pages).map { _ in objects.reserve() }
        var widget: Int?
        if formFieldValue != nil { widget = objects.reserve() }

        for (index, page) in pageNumbers.enumerated() {
            let text = "BT /F1 24 Tf 72 700 Td (Page \(index + 1)) Tj ET\n"
            let content = objects.add(Self.stream(dictionary: "", data: text))
            var annots: [Int] = []
            for (k, annotation) in (annotations[index] ?? []).enumerated() {
                annots.append(objects.add(annotationObject(annotation, number: k, page: page, font: font, objects: &objects)))
            }
            if index == 0, let widget { annots.append(widget) }
            let annotsEntry = annots.isEmpty ? "" : " /Annots [" + annots.map { "\($0) 0 R" }.joined(separator: " ") + "]"
            objects.set(page, "<< /Type /Page /Parent \(pageTree) 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 \(font) 0 R >> >> /Contents \(content) 0 R\(annotsEntry) /HFTestPage (p\(index + 1)) >>")
        }

        var acroForm = ""
        if let value = formFieldValue, let widget {
            objects.set(widget, "<< /Type /Annot /Subtype /Widget /FT /Tx /T (name) /V \(Self.textString(value)) /DA (/Helv 12 Tf 0 g) /Rect [72 600 372 630] /F 4 /P \(pageNumbers[0]) 0 R /NM (field) >>")
            acroForm = " /AcroForm << /Fields [\(widget) 0 R] /NeedAppearances true /DR << /Font << /Helv \(font) 0 R >> >> /DA (/Helv 0 Tf 0 g) >>"
        }
        objects.set(pageTree, "<< /Type /Pages /Kids [" + pageNumbers.map { "\($0) 0 R" }.joined(separator: " ") + "] /Count \(pages) >>")
        objects.set(catalog, "<< /Type /Catalog /Pages \(pageTree) 0 R\(acroForm) >>")
        var info: Int?
        if let title { info = objects.add("<< /Title \(Self.textString(title)) /Producer (hotfolder tests) >>") }

        var out: [UInt8] = Array("%PDF-1.7\n%".utf8) + [0xE2, 0xE3, 0xCF, 0xD3, 0x0A]
        var offsets: [Int] = []
        for (i, body) in objects.bodies.enumerated() {
            offsets.append(out.count)
            out += Array("\(i + 1) 0 obj\n\(body ?? "null")\nendobj\n".utf8)
        }
        let xref = out.count
        var table = "xref\n0 \(offsets.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { table += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n" }
        table += "trailer\n<< /Size \(offsets.count + 1) /Root \(catalog) 0 R" + (info.map { " /Info \($0) 0 R" } ?? "") + " >>\n"
        table += "startxref\n\(xref)\n%%EOF\n"
        out += Array(table.utf8)
        if let trailerComment { out += Array("% \(trailerComment)\n".utf8) }
        return out
    }

    var data: Data { Data(bytes) }

    @discardableResult
    func write(to path: String) throws -> String {
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    private func annotationObject(_ a: Annotation, number k: Int, page: Int, font: Int, objects: inout ObjectTable) -> String {
        let y = 600 - 60 * k
        let rect = "/Rect [300 \(y) 400 \(y + 50)]"
        let common = "/Type /Annot \(rect) /F \(a.flags.rawValue) /NM (\(a.id)) /P \(page) 0 R"
        switch a.kind {
        case .square:
            let ap = objects.add(Self.stream(dictionary: "/Type /XObject /Subtype /Form /BBox [0 0 100 50] /HFTestAP (\(a.id))",
                                             data: "1 0 0 RG 2 w 1 1 98 48 re S\n"))
            return "<< /Subtype /Square \(common) /C [1 0 0] /Contents (square \(a.id)) /AP << /N \(ap) 0 R >> >>"
        case .freeText:
            let ap = objects.add(Self.stream(dictionary: "/Type /XObject /Subtype /Form /BBox [0 0 100 50] /Resources << /Font << /Helv \(font) 0 R >> >> /HFTestAP (\(a.id))",
                                             data: "BT /Helv 12 Tf 0 g 4 20 Td (Note \(a.id)) Tj ET\n"))
            return "<< /Subtype /FreeText \(common) /Contents (Note \(a.id)) /DA (/Helv 12 Tf 0 g) /AP << /N \(ap) 0 R >> >>"
        case .text:
            return "<< /Subtype /Text \(common) /Contents (comment \(a.id)) /Name /Comment >>"
        case .link:
            return "<< /Subtype /Link \(common) /Border [0 0 0] /A << /S /URI /URI (https://example.com/\(a.id)) >> >>"
        }
    }

    static func stream(dictionary: String, data: String) -> String {
        "<< \(dictionary) /Length \(data.utf8.count) >>\nstream\n\(data)endstream"
    }

    /// A PDF text string: a literal string for ASCII, else UTF-16BE with a BOM in hex.
    static func textString(_ s: String) -> String {
        if s.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) {
            var escaped = ""
            for c in s {
                if c == "(" || c == ")" || c == "\\" { escaped.append("\\") }
                escaped.append(c)
            }
            return "(\(escaped))"
        }
        var hex = "<FEFF"
        for unit in s.utf16 { hex += String(format: "%04X", unit) }
        return hex + ">"
    }

    private struct ObjectTable {
        var bodies: [String?] = []
        mutating func reserve() -> Int {
            bodies.append(nil)
            return bodies.count
        }
        mutating func add(_ body: String) -> Int {
            bodies.append(body)
            return bodies.count
        }
        mutating func set(_ number: Int, _ body: String) { bodies[number - 1] = body }
    }
}

/// Reads back what the tests need from a PDF's bytes.
enum PDFBytes {
    /// The `/HFTestPage (pK)` markers in file order: which pages an output kept.
    static func pageMarkers(_ bytes: [UInt8]) -> [Int] {
        let text = String(decoding: bytes, as: UTF8.self)
        var result: [Int] = []
        var rest = text[...]
        while let r = rest.range(of: "/HFTestPage (p") {
            let digits = rest[r.upperBound...].prefix { $0.isNumber }
            if let n = Int(digits) { result.append(n) }
            rest = rest[r.upperBound...]
        }
        return result
    }

    static func contains(_ bytes: [UInt8], _ needle: String) -> Bool { count(bytes, needle) > 0 }

    static func count(_ bytes: [UInt8], _ needle: String) -> Int {
        let n = Array(needle.utf8)
        guard !n.isEmpty, bytes.count >= n.count else { return 0 }
        var found = 0
        var i = 0
        let first = n[0]
        while i <= bytes.count - n.count {
            if bytes[i] == first && Array(bytes[i..<(i + n.count)]) == n {
                found += 1
                i += n.count
            } else {
                i += 1
            }
        }
        return found
    }
}
