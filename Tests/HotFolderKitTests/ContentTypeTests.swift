import XCTest
@testable import HotFolderKit

final class ContentTypeTests: XCTestCase {
    func identify(_ bytes: [UInt8], size: Int? = nil) -> ContentType {
        ContentType.identify(prefix: Array(bytes.prefix(1024)), size: size ?? bytes.count)
    }

    func testMagicNumbers() {
        let cases: [([UInt8], ContentType)] = [
            (Array("%PDF-1.7\n".utf8), .pdf),
            (Array("junk before the header\r\n%PDF-1.4\n".utf8), .pdf),
            ([0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10], .jpeg),
            ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0], .png),
            ([0x49, 0x49, 0x2A, 0x00, 8, 0], .tiff),
            ([0x4D, 0x4D, 0x00, 0x2A, 0, 8], .tiff),
            (Array("GIF89a".utf8) + [1, 0, 1, 0], .gif),
            (Array("BM".utf8) + [UInt8](repeating: 0, count: 40), .bmp),
            (Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8 ".utf8), .webp),
            ([0x50, 0x4B, 0x03, 0x04, 20, 0], .zip),
            (Array("%!PS-Adobe-3.0\n".utf8), .postscript),
            ([0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1], .ole),
            (Array("{\\rtf1\\ansi".utf8), .rtf),
            (Array("<!DOCTYPE html><html></html>".utf8), .html),
            (Array("<HTML><body>".utf8), .html),
            (Array("<?xml version=\"1.0\"?><a/>".utf8), .xml),
            (Array("Dear reader,\nplain text.\n".utf8), .text),
            (Array("Grüße, 日本語\n".utf8), .text),
            ([0x00, 0x01, 0x02, 0xFE, 0xFF, 0x80], .unknown),
            (randomBytes(2048, seed: 7), .unknown),
        ]
        for (bytes, expected) in cases {
            XCTAssertEqual(identify(bytes), expected, "\(bytes.prefix(12))")
        }
    }

    func testEmpty() {
        XCTAssertEqual(identify([]), .empty)
        XCTAssertEqual(ContentType.identify(prefix: [], size: 0), .empty)
    }

    func testPDFHeaderOnlyCountsInTheFirstKilobyte() {
        let late = [UInt8](repeating: 0x01, count: 1100) + Array("%PDF-1.4\n".utf8)
        XCTAssertNotEqual(identify(late), .pdf)
        let edge = [UInt8](repeating: 0x20, count: 1019) + Array("%PDF-".utf8)
        XCTAssertEqual(identify(edge), .pdf, "a header ending at byte 1024 counts")
    }

    func testShortFiles() {
        XCTAssertEqual(identify(Array("%PDF".utf8)), .text, "too short to be a PDF header")
        XCTAssertEqual(identify(Array("BM".utf8)), .text, "a 2-byte BM is no bitmap")
        XCTAssertEqual(identify([0xFF]), .unknown)
    }

    func testPhrases() {
        XCTAssertEqual(ContentType.png.phrase, "a PNG image")
        XCTAssertEqual(ContentType.empty.phrase, "an empty file (0 bytes)")
        XCTAssertTrue(ContentType.zip.phrase.contains(".docx"))
    }
}
