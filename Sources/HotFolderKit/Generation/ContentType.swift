/// What a file's first bytes say it is; the name's extension is never trusted.
public enum ContentType: String, Sendable, Codable, Equatable {
    case pdf, jpeg, png, tiff, gif, bmp, webp, zip, postscript, ole, rtf, html, xml, text, empty, unknown

    public static func identify(prefix bytes: [UInt8], size: Int) -> ContentType {
        if size == 0 { return .empty }
        func starts(_ magic: [UInt8]) -> Bool { bytes.count >= magic.count && Array(bytes.prefix(magic.count)) == magic }
        // PDF readers accept junk before the header within the first kilobyte.
        let pdfMagic: [UInt8] = Array("%PDF-".utf8)
        if bytes.count >= pdfMagic.count {
            let window = bytes.prefix(1024)
            for i in 0...(window.count - pdfMagic.count) where window[i] == 0x25 && Array(window[i..<(i + pdfMagic.count)]) == pdfMagic {
                return .pdf
            }
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts(Array("GIF8".utf8)) { return .gif }
        if starts(Array("BM".utf8)) && size > 26 { return .bmp }
        if starts(Array("RIFF".utf8)) && bytes.count >= 12 && Array(bytes[8..<12]) == Array("WEBP".utf8) { return .webp }
        if starts([0x50, 0x4B, 0x03, 0x04]) { return .zip }
        if starts(Array("%!PS".utf8)) { return .postscript }
        if starts([0xD0, 0xCF, 0x11, 0xE0]) { return .ole }
        if starts(Array("{\\rtf".utf8)) { return .rtf }
        let head = String(decoding: bytes.prefix(256), as: UTF8.self).lowercased()
        if head.contains("<!doctype html") || head.contains("<html") { return .html }
        if head.hasPrefix("<?xml") { return .xml }
        if !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil || bytes.allSatisfy({ $0 < 0x80 }) { return .text }
        return .unknown
    }

    /// "a PNG image", for "it seems to be …".
    public var phrase: String {
        switch self {
        case .pdf: "a PDF document"
        case .jpeg: "a JPEG image"
        case .png: "a PNG image"
        case .tiff: "a TIFF image"
        case .gif: "a GIF image"
        case .bmp: "a BMP image"
        case .webp: "a WebP image"
        case .zip: "a ZIP archive (an Office document such as .docx or .odt is one)"
        case .postscript: "a PostScript file"
        case .ole: "an old Microsoft Office document (.doc, .xls or .ppt)"
        case .rtf: "an RTF document"
        case .html: "an HTML page"
        case .xml: "an XML file"
        case .text: "plain text"
        case .empty: "an empty file (0 bytes)"
        case .unknown: "unrecognized binary data"
        }
    }
}
