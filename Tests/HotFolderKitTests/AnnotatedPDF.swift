import Foundation

// MARK: - annotated PDFs with exact bytes

/// A PDF text string in UTF-16BE with a byte order mark.
func utf16(_ s: String) -> [UInt8] {
    Array(("<FEFF" + s.utf16.map { String(format: "%04X", $0) }.joined() + ">").utf8)
}

/// A literal string holding exactly these bytes.
func literal(_ bytes: [UInt8]) -> [UInt8] {
    var out: [UInt8] = [UInt8(ascii: "(")]
    for b in bytes {
        switch b {
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), b]
        case UInt8(ascii: "\n"): out += Array("\\n".utf8)
        case UInt8(ascii: "\r"): out += Array("\\r".utf8)
        default: out.append(b)
        }
    }
    return out + [UInt8(ascii: ")")]
}

func literal(_ s: String) -> [UInt8] { literal(Array(s.utf8)) }

/// An annotation dictionary; values are PDF syntax.
func annotation(_ subtype: String, _ entries: [(String, [UInt8])]) -> [UInt8] {
    var out = Array("<< /Type /Annot /Subtype /\(subtype) /Rect [100 100 200 150]".utf8)
    for (key, value) in entries { out += Array(" \(key) ".utf8) + value }
    return out + Array(" >>".utf8)
}

/// PDF syntax as written (a number, a name, a hex string).
func raw(_ s: String) -> [UInt8] { Array(s.utf8) }

struct AnnotatedPDF {
    struct Page {
        var mediaBox = "0 0 612 792"
        var cropBox: String?
        var rotate: Int?
        var annotations: [[UInt8]] = []
    }

    var pages: [Page]

    var bytes: [UInt8] {
        // 1 catalog, 2 page tree, 3 font, then per page: page, content, annotations.
        var objects: [[UInt8]] = [[], [], Array("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".utf8)]
        var pageNumbers: [Int] = []
        for (index, page) in pages.enumerated() {
            let pageNumber = objects.count + 1
            pageNumbers.append(pageNumber)
            objects.append([])
            let content = "BT /F1 24 Tf 72 500 Td (Page \(index + 1)) Tj ET\n"
            objects.append(Array("<< /Length \(content.utf8.count) >>\nstream\n\(content)endstream".utf8))
            var annots: [Int] = []
            for a in page.annotations {
                objects.append(a)
                annots.append(objects.count)
            }
            var dictionary = "<< /Type /Page /Parent 2 0 R /MediaBox [\(page.mediaBox)] /Resources << /Font << /F1 3 0 R >> >> /Contents \(pageNumber + 1) 0 R"
            if let crop = page.cropBox { dictionary += " /CropBox [\(crop)]" }
            if let rotate = page.rotate { dictionary += " /Rotate \(rotate)" }
            if !annots.isEmpty { dictionary += " /Annots [" + annots.map { "\($0) 0 R" }.joined(separator: " ") + "]" }
            objects[pageNumber - 1] = Array((dictionary + " >>").utf8)
        }
        objects[0] = Array("<< /Type /Catalog /Pages 2 0 R >>".utf8)
        objects[1] = Array(("<< /Type /Pages /Kids [" + pageNumbers.map { "\($0) 0 R" }.joined(separator: " ") + "] /Count \(pages.count) >>").utf8)

        var out: [UInt8] = Array("%PDF-1.7\n%".utf8) + [0xE2, 0xE3, 0xCF, 0xD3, 0x0A]
        var offsets: [Int] = []
        for (i, body) in objects.enumerated() {
            offsets.append(out.count)
            out += Array("\(i + 1) 0 obj\n".utf8) + body + Array("\nendobj\n".utf8)
        }
        let xref = out.count
        var table = "xref\n0 \(offsets.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { table += String(format: "%010d 00000 n \n", offset) }
        table += "trailer\n<< /Size \(offsets.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return out + Array(table.utf8)
    }

    func write(to path: String) throws -> String {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}
