import Foundation
import XCTest
@testable import HotFolderKit

/// The sharing model end to end through the running service, on real files:
/// image output compared with poppler's own rendering, image input turned into
/// PDF pages, annotation summaries read back with pdftotext, previews.
final class SharingModelTests: XCTestCase {
    func decode(_ path: String) throws -> RGBImage {
        try RGBImage.decode(readBytes(path), description: path)
    }

    /// pdftoppm's rendering of one page (1-based).
    func poppler(_ pdf: String, page: Int, dpi: Int, hideAnnotations: Bool = false, in temp: String) throws -> RGBImage {
        let prefix = temp + "/ref-\(UUID().uuidString)"
        let result = try runProcess(Tools.pdftoppm, ["-r", "\(dpi)", "-f", "\(page)", "-l", "\(page)", "-singlefile"]
                                    + (hideAnnotations ? ["-hide-annotations"] : []) + [pdf, prefix])
        XCTAssertEqual(result.status, 0, result.stderr)
        return try XCTUnwrap(PPM.parse(readBytes(prefix + ".ppm")))
    }

    func pageSize(_ pdf: String) throws -> String {
        let document = try openPDF(pdf)
        let size = try document.pageSize(0)
        return "\(Int(size.width.rounded()))x\(Int(size.height.rounded()))"
    }

    func pdftotext(_ pdf: String) throws -> String {
        let result = try runProcess("/usr/bin/pdftotext", [pdf, "-"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    // MARK: - image output

    func testImageOutputIsOneFilePerPageAsPopplerDrawsIt() throws {
        let h = try ServiceHarness("export.format = image\nexport.image.dpi = 72\n")
        defer { h.stop() }
        h.start()
        let source = h.temp.path + "/three.pdf"
        _ = try TestPDF(pages: 3).write(to: source)
        writeFile(h.drop + "/three.pdf", readBytes(source))
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(regularFiles(in: h.out).sorted(), ["three-1.png", "three-2.png", "three-3.png"])
        for page in 1...3 {
            let ours = try decode(h.out + "/three-\(page).png")
            let theirs = try poppler(source, page: page, dpi: 72, in: h.temp.path)
            XCTAssertEqual(ours.size, theirs.size)
            XCTAssertLessThan(Pixels.meanAbsoluteDifference(ours, theirs), 0.5, "page \(page)")
        }
        let pages = try (1...3).map { try decode(h.out + "/three-\($0).png") }
        XCTAssertNotEqual(pages[0].pixels, pages[1].pixels, "each file shows its own page")
    }

    func testImagesShowThePrintAppearanceWithFlattenForPrint() throws {
        // A square that shows on screen but not in print (no Print flag).
        let pdf = TestPDF(pages: 1, annotations: [0: [.square("screen-only", flags: [])]])
        for (option, hide) in [("flatten-for-print", true), ("embed", false)] {
            let h = try ServiceHarness("export.format = image\nexport.image.dpi = 72\nexport.annotations = \(option)\n")
            defer { h.stop() }
            h.start()
            let source = try pdf.write(to: h.temp.path + "/a.pdf")
            writeFile(h.drop + "/a.pdf", readBytes(source))
            h.waitForOutcomes(1)
            XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
            let ours = try decode(h.out + "/a.png")
            let expected = try poppler(source, page: 1, dpi: 72, hideAnnotations: hide, in: h.temp.path)
            let other = try poppler(source, page: 1, dpi: 72, hideAnnotations: !hide, in: h.temp.path)
            let near = Pixels.meanAbsoluteDifference(ours, expected), far = Pixels.meanAbsoluteDifference(ours, other)
            XCTAssertLessThan(near, 0.05, option)
            XCTAssertGreaterThan(far, 0.1, "\(option): the square makes a visible difference")
        }
    }

    func testJPEGImagesWithPageInTheNameAndPaddedNumbers() throws {
        let h = try ServiceHarness("export.format = image\nexport.image.type = jpeg\nexport.image.dpi = 20\nexport.image.quality = 60\nexport.name = {stem} p{page}\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/long.pdf", TestPDF(pages: 12).bytes)
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        let names = regularFiles(in: h.out).sorted()
        XCTAssertEqual(names.count, 12)
        XCTAssertEqual(names.first, "long p01.jpg")
        XCTAssertEqual(names.last, "long p12.jpg")
        XCTAssertEqual(Array(readBytes(h.out + "/long p01.jpg").prefix(3)), [0xFF, 0xD8, 0xFF])
    }

    func testImageOutputOfALongDocumentFallsBackToTheNextAllowedSelection() throws {
        let h = try ServiceHarness("export.format = image\nexport.image.dpi = 20\nexport.pages = all, first\nexport.image.max-pages = 5\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/six.pdf", TestPDF(pages: 6).bytes)
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(regularFiles(in: h.out), ["six.png"], "all removed (6 > image.max-pages), first applies")
    }

    func testPreviewBesideTheExport() throws {
        let h = try ServiceHarness("export.preview = yes\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/doc.pdf", TestPDF(pages: 2).bytes)
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(regularFiles(in: h.out).sorted(), ["doc.pdf", "doc.preview.png"])
        let preview = try decode(h.out + "/doc.preview.png")
        XCTAssertEqual(max(preview.size.width, preview.size.height), 512)
    }

    // MARK: - image input

    /// A JPEG made by poppler from a test page (a real encoder's output).
    func jpeg(in temp: TemporaryFolder) throws -> [UInt8] {
        let pdf = try TestPDF(pages: 1).write(to: temp.path + "/for-jpeg.pdf")
        let result = try runProcess(Tools.pdftoppm, ["-r", "50", "-jpeg", "-singlefile", pdf, temp.path + "/photo"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return readBytes(temp.path + "/photo.jpg")
    }

    func testAJPEGBecomesAPDFPageWithItsBytesUnchanged() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        let photo = try jpeg(in: h.temp)
        writeFile(h.drop + "/photo.jpg", photo)
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(regularFiles(in: h.out), ["photo.pdf"])
        let pdf = readBytes(h.out + "/photo.pdf")
        XCTAssertEqual(Array(pdf.prefix(5)), Array("%PDF-".utf8))
        XCTAssertTrue(pdf.firstRange(of: photo) != nil, "the JPEG is embedded without re-encoding")
        XCTAssertEqual(try summarize(h.out + "/photo.pdf").pages, 1)
        XCTAssertEqual(readBytes(h.done + "/photo.jpg"), photo)
    }

    func testPNGAndTIFFBecomePDFPagesThatLookTheSame() throws {
        let h = try ServiceHarness("export.format = pdf\n")
        defer { h.stop() }
        let pdf = try TestPDF(pages: 1).write(to: h.temp.path + "/page.pdf")
        for (flag, ext) in [("-png", "png"), ("-tiff", "tif")] {
            let made = try runProcess(Tools.pdftoppm, ["-r", "36", flag, "-singlefile", pdf, h.temp.path + "/scan-" + ext])
            XCTAssertEqual(made.status, 0, made.stderr)
        }
        h.start()
        for ext in ["png", "tif"] { writeFile(h.drop + "/scan-\(ext).\(ext)", readBytes(h.temp.path + "/scan-\(ext).\(ext)")) }
        h.waitForOutcomes(2)
        XCTAssertEqual(h.recorder.succeeded.count, 2, h.recorder.logText)
        let original = try poppler(pdf, page: 1, dpi: 36, in: h.temp.path)
        for ext in ["png", "tif"] {
            let out = h.out + "/scan-\(ext).pdf"
            XCTAssertEqual(try summarize(out).pages, 1, ext)
            // pdftoppm records 36 dpi in the image: the page gets the original's
            // size, and rendered at 36 dpi each pixel comes back where it was.
            XCTAssertEqual(try pageSize(out), try pageSize(pdf), ext)
            let back = try poppler(out, page: 1, dpi: 36, in: h.temp.path)
            XCTAssertEqual(back.size, original.size, ext)
            XCTAssertLessThan(Pixels.meanAbsoluteDifference(back, original), 2, ext)
        }
    }

    func testImageInputDefaultsToImageOrOriginalWhereAllowed() throws {
        let temp = TemporaryFolder("hf-jpeg")
        let photo = try jpeg(in: temp)
        let h = try ServiceHarness("export.format = pdf, image\nexport.image.dpi = 50\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/photo.jpg", photo)
        h.waitForOutcomes(1)
        XCTAssertEqual(regularFiles(in: h.out), ["photo.png"], "image input and image allowed → image, \(h.recorder.logText)")

        let o = try ServiceHarness("export.format = pdf, original\n")
        defer { o.stop() }
        o.start()
        writeFile(o.drop + "/photo.jpg", photo)
        o.waitForOutcomes(1)
        XCTAssertEqual(readBytes(o.out + "/photo.jpg"), photo, "a non-PDF original goes as it is where original is allowed")
    }

    func testADamagedImageFailsWithAReason() throws {
        let h = try ServiceHarness()
        defer { h.stop() }
        h.start()
        let photo = try jpeg(in: h.temp)
        writeFile(h.drop + "/cut.jpg", Array(photo.prefix(photo.count / 2)))
        h.waitForOutcomes(1)
        let failure = try XCTUnwrap(h.recorder.outcomes.first?.failure)
        XCTAssertTrue(failure.reason.contains("JPEG"), failure.reason)
        XCTAssertTrue(failure.reason.contains("truncated"), failure.reason)
        XCTAssertTrue(exists(h.failed + "/cut.jpg"))
    }

    // MARK: - annotation summary

    func annotatedPDF() -> [UInt8] {
        AnnotatedPDF(pages: [
            AnnotatedPDF.Page(annotations: [annotation("Text", [("/T", utf16("Jürgen Weiß")), ("/Contents", utf16("Bitte prüfen — Größe ändern")), ("/M", literal("D:20240501140300Z"))])]),
            AnnotatedPDF.Page(),
            AnnotatedPDF.Page(annotations: [annotation("Highlight", [("/T", utf16("王小明")), ("/Contents", utf16("请确认这个数字"))]),
                                            annotation("Link", [("/A", raw("<< /S /URI /URI (https://example.org) >>"))])]),
        ]).bytes
    }

    func testSummaryPagesFollowTheDocumentAndTheListLiesBeside() throws {
        let h = try ServiceHarness("export.annotations = summary\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/review.pdf", annotatedPDF())
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(regularFiles(in: h.out).sorted(), ["review.annotations.json", "review.pdf"])
        let summary = try summarize(h.out + "/review.pdf")
        XCTAssertEqual(summary.pages, 4, "3 pages + 1 summary page")
        XCTAssertEqual(summary.annotations, 0, "the annotations are flattened (the link stays, and links do not count)")
        let text = try pdftotext(h.out + "/review.pdf")
        for expected in ["Jürgen Weiß", "Bitte prüfen", "王小明", "请确认这个数字", "2024-05-01"] {
            XCTAssertTrue(text.contains(expected), "\(expected) in:\n\(text)")
        }
        let list = try JSONDecoder().decode([AnnotationRecord].self, from: Data(readBytes(h.out + "/review.annotations.json")))
        XCTAssertEqual(list.map(\.page), [1, 3])
        XCTAssertEqual(list.map(\.type), ["Text", "Highlight"])
        XCTAssertEqual(list.first?.author, "Jürgen Weiß")
    }

    func testASummaryOfADocumentWithoutAnnotationsIsSkippedAndLogged() throws {
        let h = try ServiceHarness("export.annotations = summary\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/clean.pdf", TestPDF(pages: 2).bytes)
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(regularFiles(in: h.out), ["clean.pdf"])
        XCTAssertEqual(try summarize(h.out + "/clean.pdf").pages, 2)
        XCTAssertTrue(h.recorder.logText.contains("no summary added"), h.recorder.logText)
    }

    func testSummaryAsImagesIncludesTheSummaryPages() throws {
        let h = try ServiceHarness("export.annotations = summary\nexport.format = image\nexport.image.dpi = 20\n")
        defer { h.stop() }
        h.start()
        writeFile(h.drop + "/review.pdf", annotatedPDF())
        h.waitForOutcomes(1)
        XCTAssertTrue(h.recorder.outcomes.first?.succeeded == true, h.recorder.logText)
        XCTAssertEqual(regularFiles(in: h.out).sorted(), ["review-1.png", "review-2.png", "review-3.png", "review-4.png", "review.annotations.json"])
    }
}
