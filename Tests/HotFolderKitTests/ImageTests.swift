import Foundation
import Synchronization
import XCTest
@testable import HotFolderKit

/// Pages to images (checked against poppler's own pdftoppm) and image files to
/// PDF (checked with qpdf and by rendering the result with pdftoppm).
final class ImageTests: XCTestCase {
    private var temp: TemporaryFolder!
    private var folder: Directory!

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: Tools.pdftoppm) else {
            throw XCTSkip("pdftoppm (poppler-utils) is not installed")
        }
        temp = TemporaryFolder("hf-image")
        folder = try Directory(path: temp.path)
    }

    override func tearDown() {
        folder = nil
        temp = nil
    }

    // MARK: - helpers

    private func path(_ name: String) -> String { temp.path + "/" + name }

    @discardableResult
    private func write(_ name: String, _ bytes: [UInt8]) -> String {
        writeFile(path(name), bytes)
        return name
    }

    private func input(_ name: String) throws -> FileDescriptor { try folder.openForReading(name) }
    private func output(_ name: String) throws -> FileDescriptor { try folder.createFile(name) }

    private func renderer(_ name: String, password: String? = nil) throws -> PageRenderer {
        try PageRenderer.open(try input(name), description: name, password: password)
    }

    /// pdftoppm's rendering of one page (1-based) as RGB.
    private func reference(_ pdf: String, page: Int = 1, dpi: Int, extra: [String] = []) throws -> RGBImage {
        let prefix = path("ref-\(UUID().uuidString)")
        let result = try runProcess(Tools.pdftoppm, ["-r", "\(dpi)", "-f", "\(page)", "-l", "\(page)", "-singlefile"] + extra + [path(pdf), prefix])
        XCTAssertEqual(result.status, 0, result.stderr)
        return try XCTUnwrap(PPM.parse(readBytes(prefix + ".ppm")), "pdftoppm wrote no PPM: \(result.stderr)")
    }

    private func converted(_ name: String, maxPixels: Int = ImageConverter.defaultMaxPixels,
                           file: StaticString = #filePath, line: UInt = #line) throws -> (pdf: String, pages: Int, warnings: [String]) {
        let pdf = name + ".pdf"
        var warnings: [String] = []
        let pages = try ImageConverter.convertToPDF(try input(name), description: name, output: try output(pdf),
                                                    maxPixels: maxPixels, warnings: &warnings)
        try assertQpdfClean(pdf, file: file, line: line)
        return (pdf, pages, warnings)
    }

    /// A stream's data as qpdf reads it (decoded unless `filtered` is false).
    private func streamData(_ pdf: String, object: Int, filtered: Bool = true) throws -> [UInt8] {
        guard let qpdf = qpdfTool else { throw XCTSkip("qpdf is not installed") }
        let target = path("stream-\(UUID().uuidString)")
        let mode = filtered ? "--filtered-stream-data" : "--raw-stream-data"
        let result = try runProcess("/bin/sh", ["-c", "\"$0\" --show-object=\(object) \(mode) \"$1\" > \"$2\"", qpdf, path(pdf), target])
        XCTAssertEqual(result.status, 0, result.stderr)
        return readBytes(target)
    }

    private func assertQpdfClean(_ pdf: String, file: StaticString = #filePath, line: UInt = #line) throws {
        guard let qpdf = qpdfTool else { return }
        let check = try runProcess(qpdf, ["--check", path(pdf)])
        XCTAssertEqual(check.status, 0, "\(pdf): \(check.stdout)\(check.stderr)", file: file, line: line)
        XCTAssertTrue(check.stdout.contains("No syntax or stream encoding errors found"), check.stdout, file: file, line: line)
        XCTAssertFalse(check.stderr.contains("WARNING"), check.stderr, file: file, line: line)
    }

    private func assertError(_ expected: ImageError.Kind, containing text: String, file: StaticString = #filePath, line: UInt = #line,
                             _ body: () throws -> Void) {
        do {
            try body()
            XCTFail("no error; expected \(expected) with \"\(text)\"", file: file, line: line)
        } catch let error as ImageError {
            XCTAssertEqual(error.kind, expected, error.description, file: file, line: line)
            XCTAssertTrue(error.description.contains(text), error.description, file: file, line: line)
            XCTAssertTrue(error.description.hasPrefix(error.file), "the message names the file: \(error.description)", file: file, line: line)
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
    }

    // MARK: - pages to images

    func testRenderedPNGMatchesPdftoppm() throws {
        write("shapes.pdf", Fixtures.pdf(pages: [Fixtures.shapes, Fixtures.shapes + " 1 0 1 rg 400 600 100 100 re f"]))
        let document = try renderer("shapes.pdf")
        XCTAssertEqual(document.pageCount, 2)
        for (page, dpi) in [(0, 150), (1, 72)] {
            let name = "page\(page).png"
            let rendered = try document.render(page: page, type: .png, dpi: Double(dpi), to: try output(name))
            let bytes = readBytes(path(name))
            XCTAssertEqual(rendered.bytes, bytes.count)
            XCTAssertEqual(Array(bytes.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            let ours = try RGBImage.decode(bytes, description: name)
            let theirs = try reference("shapes.pdf", page: page + 1, dpi: dpi)
            XCTAssertEqual(ours.size, theirs.size)
            XCTAssertEqual(rendered.size, ours.size)
            XCTAssertEqual(ours.size, PixelSize(width: 612 * dpi / 72, height: 792 * dpi / 72))
            let difference = Pixels.meanAbsoluteDifference(ours, theirs)
            XCTAssertLessThan(difference, 0.5, "page \(page + 1) at \(dpi) dpi")
        }
        // The magenta square exists only on page 2.
        let second = try RGBImage.decode(readBytes(path("page1.png")), description: "page1.png")
        XCTAssertTrue(Pixels.isClose(second.pixel(450, 792 - 650), (255, 0, 255), tolerance: 0))
    }

    func testRotatedPageIsTurnedLikePdftoppm() throws {
        write("rotated.pdf", Fixtures.pdf(pages: [Fixtures.shapes], rotate: 90))
        let rendered = try renderer("rotated.pdf").render(page: 0, type: .png, dpi: 72, to: try output("r.png"))
        XCTAssertEqual(rendered.size, PixelSize(width: 792, height: 612))
        let ours = try RGBImage.decode(readBytes(path("r.png")), description: "r.png")
        XCTAssertLessThan(Pixels.meanAbsoluteDifference(ours, try reference("rotated.pdf", dpi: 72)), 0.5)
    }

    func testAnnotationAppearancesAreRendered() throws {
        let pdf = TestPDF(pages: 1, annotations: [0: [.square("sq"), .freeText("ft")]])
        try pdf.write(to: path("annotated.pdf"))
        try renderer("annotated.pdf").render(page: 0, type: .png, dpi: 100, to: try output("a.png"))
        let ours = try RGBImage.decode(readBytes(path("a.png")), description: "a.png")
        let withAnnotations = try reference("annotated.pdf", dpi: 100)
        let without = try reference("annotated.pdf", dpi: 100, extra: ["-hide-annotations"])
        XCTAssertLessThan(Pixels.meanAbsoluteDifference(ours, withAnnotations), 0.5)
        XCTAssertGreaterThan(Pixels.meanAbsoluteDifference(ours, without), 0.05, "the annotations are visible")
    }

    func testJPEGOutputDecodesAtTheRightSize() throws {
        write("shapes.pdf", Fixtures.pdf(pages: [Fixtures.shapes]))
        let document = try renderer("shapes.pdf")
        let rendered = try document.render(page: 0, type: .jpeg, dpi: 100, quality: 90, to: try output("p.jpg"))
        let bytes = readBytes(path("p.jpg"))
        XCTAssertEqual(Array(bytes.prefix(3)), [0xFF, 0xD8, 0xFF])
        XCTAssertEqual(rendered.bytes, bytes.count)
        let ours = try RGBImage.decode(bytes, description: "p.jpg")
        XCTAssertEqual(ours.size, PixelSize(width: 850, height: 1100))
        XCTAssertEqual(rendered.size, ours.size)
        XCTAssertLessThan(Pixels.meanAbsoluteDifference(ours, try reference("shapes.pdf", dpi: 100)), 3)
        // Lower quality, fewer bytes.
        let small = try document.render(page: 0, type: .jpeg, dpi: 100, quality: 20, to: try output("q20.jpg"))
        XCTAssertLessThan(small.bytes, rendered.bytes)
        XCTAssertEqual(ImageType.jpeg.ext, "jpg")
        XCTAssertEqual(ImageType.png.ext, "png")
    }

    func testFitWithinScalesDownOnly() throws {
        write("letter.pdf", Fixtures.pdf(pages: [Fixtures.shapes]))
        let document = try renderer("letter.pdf")
        let thumbnail = try document.render(page: 0, type: .png, dpi: 150, fitWithin: 256, to: try output("t.png"))
        XCTAssertEqual(thumbnail.size.height, 256)
        XCTAssertEqual(Double(thumbnail.size.width), 612.0 * 256 / 792, accuracy: 1)
        XCTAssertEqual(thumbnail.dpi, 256 * 72.0 / 792, accuracy: 0.001)
        let decoded = try RGBImage.decode(readBytes(path("t.png")), description: "t.png")
        XCTAssertEqual(decoded.size, thumbnail.size)
        let unscaled = try document.render(page: 0, type: .jpeg, dpi: 72, fitWithin: 5000, to: try output("u.jpg"))
        XCTAssertEqual(unscaled.size, PixelSize(width: 612, height: 792), "never scaled up")
    }

    func testAbsurdPageSizeIsRefusedBeforeRendering() throws {
        write("huge.pdf", Fixtures.pdf(pages: [Fixtures.shapes], width: 14400, height: 14400))
        let document = try renderer("huge.pdf")
        assertError(.tooLarge, containing: "120000 x 120000 pixels") {
            try document.render(page: 0, type: .png, dpi: 600, to: try output("huge.png"))
        }
        XCTAssertEqual(readBytes(path("huge.png")).count, 0, "nothing written")
        assertError(.tooLarge, containing: "megapixels") {
            try document.render(page: 0, type: .jpeg, dpi: 72, maxPixels: 1_000_000, to: try output("huge2.jpg"))
        }
        // The same page as a preview is fine.
        XCTAssertEqual(try document.render(page: 0, type: .png, dpi: 600, fitWithin: 300, to: try output("ok.png")).size,
                       PixelSize(width: 300, height: 300))
        assertError(.invalidArgument, containing: "page 3 does not exist") {
            try document.render(page: 2, type: .png, dpi: 72, to: try output("none.png"))
        }
        assertError(.invalidArgument, containing: "quality") {
            try document.render(page: 0, type: .jpeg, dpi: 72, quality: 0, to: try output("q0.jpg"))
        }
    }

    func testDamagedAndEncryptedPDFs() throws {
        write("junk.pdf", Array("%PDF-1.4\nnothing here\n".utf8))
        assertError(.damaged, containing: "junk.pdf") { _ = try renderer("junk.pdf") }
        write("empty.pdf", [])
        assertError(.damaged, containing: "empty") { _ = try renderer("empty.pdf") }

        guard let qpdf = qpdfTool else { return }
        write("plain.pdf", Fixtures.pdf(pages: [Fixtures.shapes]))
        let encrypt = try runProcess(qpdf, ["--encrypt", "secret", "owner", "256", "--", path("plain.pdf"), path("locked.pdf")])
        XCTAssertEqual(encrypt.status, 0, encrypt.stderr)
        assertError(.passwordNeeded, containing: "needs a password") { _ = try renderer("locked.pdf") }
        assertError(.passwordNeeded, containing: "password is wrong") { _ = try renderer("locked.pdf", password: "nope") }
        let unlocked = try renderer("locked.pdf", password: "secret")
        XCTAssertEqual(try unlocked.render(page: 0, type: .png, dpi: 36, to: try output("l.png")).size, PixelSize(width: 306, height: 396))
    }

    func testWriteFailureCarriesErrno() throws {
        write("shapes.pdf", Fixtures.pdf(pages: [Fixtures.shapes]))
        let fd = open("/dev/full", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw XCTSkip("/dev/full is not available") }
        let full = FileDescriptor(adopting: fd, path: "/dev/full")
        let document = try renderer("shapes.pdf")
        for type in ImageType.allCases {
            assertError(.system(errno: ENOSPC), containing: "/dev/full") {
                try document.render(page: 0, type: type, dpi: 72, to: full)
            }
        }
        write("photo.jpg", try pdftoppmImage("shapes.pdf", format: "-jpeg", dpi: 20))
        assertError(.system(errno: ENOSPC), containing: "/dev/full") {
            try ImageConverter.convertToPDF(try input("photo.jpg"), description: "photo.jpg", output: full)
        }
    }

    func testConcurrentRenderingGivesTheSameBytes() throws {
        write("shapes.pdf", Fixtures.pdf(pages: [Fixtures.shapes]))
        let root = temp.path
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { i in
            do {
                let folder = try Directory(path: root)
                let document = try PageRenderer.open(try folder.openForReading("shapes.pdf"), description: "shapes.pdf", password: nil)
                try document.render(page: 0, type: i % 2 == 0 ? .png : .jpeg, dpi: 60, to: try folder.createFile("c\(i)"))
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertEqual(readBytes(path("c0")), readBytes(path("c2")))
        XCTAssertEqual(readBytes(path("c1")), readBytes(path("c3")))
    }

    // MARK: - images to PDF

    /// pdftoppm's rendering of the first page of a generated PDF, as a file in a given format.
    private func pdftoppmImage(_ pdf: String, format: String, dpi: Int) throws -> [UInt8] {
        let prefix = path("img-\(UUID().uuidString)")
        let result = try runProcess(Tools.pdftoppm, [format, "-r", "\(dpi)", "-singlefile", path(pdf), prefix])
        XCTAssertEqual(result.status, 0, result.stderr)
        let ext = ["-jpeg": "jpg", "-jpegcmyk": "jpg", "-png": "png", "-tiff": "tif"][format] ?? "ppm"
        return readBytes(prefix + "." + ext)
    }

    func testJPEGIsEmbeddedVerbatimAndSizedByItsResolution() throws {
        // 2480 x 3508 pixels at 300 dpi is A4.
        write("a4.pdf", Fixtures.pdf(pages: [Fixtures.shapes], width: 595.2, height: 841.92))
        let jpeg = write("scan.jpg", try pdftoppmImage("a4.pdf", format: "-jpeg", dpi: 300))
        let info = try ImageConverter.probe(try input(jpeg), description: jpeg)
        XCTAssertEqual(info.format, .jpeg)
        XCTAssertEqual(info.size, PixelSize(width: 2480, height: 3508))
        XCTAssertEqual(info.xDPI, 300)
        XCTAssertTrue(info.resolutionKnown)
        XCTAssertEqual(info.components, 3)
        let result = try converted(jpeg)
        XCTAssertEqual(result.pages, 1)
        XCTAssertEqual(result.warnings, [])
        let pdf = readBytes(path(result.pdf))
        let original = readBytes(path(jpeg))
        XCTAssertNotNil(Data(pdf).range(of: Data(original)), "the JPEG's bytes are in the PDF unchanged")
        XCTAssertTrue(PDFBytes.contains(pdf, "/Filter /DCTDecode"))
        let box = try XCTUnwrap(Fixtures.mediaBoxes(pdf).first)
        XCTAssertEqual(box.width, 595.276, accuracy: 1)
        XCTAssertEqual(box.height, 841.89, accuracy: 1)
        if let qpdf = qpdfTool {
            // Objects: 1 catalog, 2 pages, 3 page, 4 content, 5 image.
            let image = try runProcess(qpdf, ["--show-object=5", path(result.pdf)])
            XCTAssertTrue(image.stdout.contains("/Length \(original.count)"), image.stdout)
            XCTAssertEqual(try streamData(result.pdf, object: 5, filtered: false), original)
        }
    }

    func testJPEGWithoutResolutionFallsBackTo72DPIAndSaysSo() throws {
        write("shapes.pdf", Fixtures.pdf(pages: [Fixtures.shapes]))
        var jpeg = try pdftoppmImage("shapes.pdf", format: "-jpeg", dpi: 20)
        // JFIF density unit 0: an aspect ratio, no resolution.
        let jfif = try XCTUnwrap(Fixtures.find(jpeg, Array("JFIF\0".utf8)))
        jpeg[jfif + 7] = 0
        write("nodpi.jpg", jpeg)
        let result = try converted("nodpi.jpg")
        XCTAssertEqual(result.warnings.count, 1)
        XCTAssertTrue(result.warnings.first?.contains("72 dpi") ?? false, "\(result.warnings)")
        let box = try XCTUnwrap(Fixtures.mediaBoxes(readBytes(path(result.pdf))).first)
        XCTAssertEqual(box.width, 170)  // 170 pixels at 72 dpi
        XCTAssertFalse(try ImageConverter.probe(try input("nodpi.jpg"), description: "nodpi.jpg").resolutionKnown)
    }

    func testConvertedImagesRenderLikeTheOriginal() throws {
        write("shapes.pdf", Fixtures.pdf(pages: [Fixtures.shapes]))
        let original = try reference("shapes.pdf", dpi: 50)
        // Splash resamples an image even at 1:1 (edges move by a fraction of
        // a pixel), so lossless inputs differ a little too; a wrong size or
        // placement gives differences of 20 and more.
        for (format, ext, tolerance) in [("-jpeg", "jpg", 3.0), ("-png", "png", 2.0), ("-tiff", "tif", 2.0)] {
            let name = write("shapes.\(ext)", try pdftoppmImage("shapes.pdf", format: format, dpi: 50))
            let result = try converted(name)
            let back = try reference(result.pdf, dpi: 50)
            XCTAssertEqual(back.size, original.size, ext)
            XCTAssertLessThan(Pixels.meanAbsoluteDifference(back, original), tolerance, ext)
        }
    }

    func testEXIFOrientationTurnsThePage() throws {
        write("shapes.pdf", Fixtures.pdf(pages: [Fixtures.shapes]))
        let jpeg = try pdftoppmImage("shapes.pdf", format: "-jpeg", dpi: 50)
        write("turned.jpg", Fixtures.withEXIFOrientation(jpeg, 6))
        XCTAssertEqual(try ImageConverter.probe(try input("turned.jpg"), description: "turned.jpg").orientation, 6)
        let result = try converted("turned.jpg")
        let box = try XCTUnwrap(Fixtures.mediaBoxes(readBytes(path(result.pdf))).first)
        XCTAssertEqual(box.width, 792)
        XCTAssertEqual(box.height, 612)
        // Orientation 6: the stored top edge is shown on the right. The red
        // box (stored top left) appears top right, the blue one left of center.
        let page = try reference(result.pdf, dpi: 50)
        XCTAssertEqual(page.size, PixelSize(width: 550, height: 425))
        XCTAssertTrue(Pixels.isClose(page.pixel(550 - 100, 100), (255, 0, 0)), "\(page.pixel(450, 100))")
        XCTAssertTrue(Pixels.isClose(page.pixel(550 - 400, 240), (0, 0, 255)), "\(page.pixel(150, 240))")
        XCTAssertEqual(Data(readBytes(path(result.pdf))).range(of: Data(readBytes(path("turned.jpg")))) != nil, true,
                       "still embedded unchanged")
    }

    func testAdobeCMYKJPEGIsDecodedInverted() throws {
        write("shapes.pdf", Fixtures.pdf(pages: [Fixtures.shapes]))
        write("cmyk.jpg", try pdftoppmImage("shapes.pdf", format: "-jpegcmyk", dpi: 50))
        XCTAssertEqual(try ImageConverter.probe(try input("cmyk.jpg"), description: "cmyk.jpg").components, 4)
        let result = try converted("cmyk.jpg")
        XCTAssertTrue(PDFBytes.contains(readBytes(path(result.pdf)), "/Decode [1 0 1 0 1 0 1 0]"))
        let page = try reference(result.pdf, dpi: 50)
        let red = page.pixel(100, 100)
        XCTAssertGreaterThan(Int(red.red), 200, "\(red)")
        XCTAssertLessThan(Int(red.green), 80, "\(red)")
        let white = page.pixel(5, 5)
        XCTAssertGreaterThan(Int(white.green), 240, "paper stays white: \(white)")
    }

    func testPNGWithAlphaGetsASoftMask() throws {
        // Left half opaque red, right half fully transparent blue.
        let rows = (0..<30).map { _ in (0..<40).flatMap { x in x < 20 ? [255, 0, 0, 255] : [0, 0, 255, 0] as [UInt8] } }
        write("alpha.png", Fixtures.png(width: 40, height: 30, colorType: 6, bitDepth: 8, rows: rows))
        let info = try ImageConverter.probe(try input("alpha.png"), description: "alpha.png")
        XCTAssertEqual(info.format, .png)
        XCTAssertTrue(info.hasAlpha)
        XCTAssertEqual(info.components, 3)
        let result = try converted("alpha.png")
        XCTAssertTrue(PDFBytes.contains(readBytes(path(result.pdf)), "/SMask 6 0 R"))
        if qpdfTool != nil {
            // Lossless: the color and the mask are exactly the PNG's samples.
            XCTAssertEqual(try streamData(result.pdf, object: 5), rows.flatMap { row in stride(from: 0, to: row.count, by: 4).flatMap { row[$0..<($0 + 3)] } })
            XCTAssertEqual(try streamData(result.pdf, object: 6), rows.flatMap { row in stride(from: 3, to: row.count, by: 4).map { row[$0] } })
        }
        let page = try reference(result.pdf, dpi: 72)
        XCTAssertEqual(page.size, PixelSize(width: 40, height: 30))
        XCTAssertTrue(Pixels.isClose(page.pixel(5, 5), (255, 0, 0)))
        XCTAssertTrue(Pixels.isClose(page.pixel(35, 5), (255, 255, 255)), "transparent shows the white page")

        // An alpha channel that is opaque everywhere needs no mask.
        let opaque = (0..<30).map { _ in (0..<40).flatMap { _ in [0, 128, 0, 255] as [UInt8] } }
        write("opaque.png", Fixtures.png(width: 40, height: 30, colorType: 6, bitDepth: 8, rows: opaque))
        XCTAssertFalse(PDFBytes.contains(readBytes(path(try converted("opaque.png").pdf)), "/SMask"))
    }

    func testSixteenBitPNGIsReducedAndKeepsItsResolution() throws {
        let rows: [[UInt8]] = (0..<30).map { y in
            (0..<40).flatMap { x -> [UInt8] in
                let r = UInt16(x * 1600), g = UInt16(y * 2000), b = UInt16(65535)
                return [UInt8(r >> 8), UInt8(r & 0xFF), UInt8(g >> 8), UInt8(g & 0xFF), UInt8(b >> 8), UInt8(b & 0xFF)]
            }
        }
        // 11811 pixels per meter is 300 dpi.
        write("deep.png", Fixtures.png(width: 40, height: 30, colorType: 2, bitDepth: 16, rows: rows, pixelsPerMeter: 11811))
        let info = try ImageConverter.probe(try input("deep.png"), description: "deep.png")
        XCTAssertEqual(info.xDPI, 300)
        let result = try converted("deep.png")
        let box = try XCTUnwrap(Fixtures.mediaBoxes(readBytes(path(result.pdf))).first)
        XCTAssertEqual(box.width, 9.6)
        XCTAssertEqual(box.height, 7.2)
        let page = try reference(result.pdf, dpi: 300)
        XCTAssertEqual(page.size, PixelSize(width: 40, height: 30))
        // Rendering moves the gradient by a fraction of a pixel (6 to 8 levels per pixel).
        let p = page.pixel(30, 20)
        XCTAssertTrue(Pixels.isClose(p, (UInt8(30 * 1600 / 257), UInt8(20 * 2000 / 257), 255), tolerance: 10), "\(p)")
        if qpdfTool != nil {
            // Each 16-bit sample rounded to 8 bits, as libpng's scale_16 does.
            let expected = rows.flatMap { row in
                stride(from: 0, to: row.count, by: 2).map { UInt8((((Int(row[$0]) << 8) | Int(row[$0 + 1])) * 255 + 32895) >> 16) }
            }
            XCTAssertEqual(try streamData(result.pdf, object: 5), expected)
        }
    }

    func testPalettePNGIsExpanded() throws {
        // 4 bands: red, green, blue, and yellow at 50% alpha (tRNS).
        let rows = (0..<30).map { _ in (0..<40).map { UInt8($0 / 10) } }
        write("palette.png", Fixtures.png(width: 40, height: 30, colorType: 3, bitDepth: 8, rows: rows,
                                          palette: [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 0], transparency: [255, 255, 255, 128]))
        let result = try converted("palette.png")
        XCTAssertTrue(PDFBytes.contains(readBytes(path(result.pdf)), "/SMask"))
        let page = try reference(result.pdf, dpi: 72)
        XCTAssertTrue(Pixels.isClose(page.pixel(5, 5), (255, 0, 0)))
        XCTAssertTrue(Pixels.isClose(page.pixel(15, 5), (0, 255, 0)))
        XCTAssertTrue(Pixels.isClose(page.pixel(25, 5), (0, 0, 255)))
        XCTAssertTrue(Pixels.isClose(page.pixel(35, 5), (255, 255, 127), tolerance: 3))

        // 1-bit gray becomes DeviceGray.
        write("bits.png", Fixtures.png(width: 32, height: 8, colorType: 0, bitDepth: 1, rows: Array(repeating: [0xFF, 0x00, 0xFF, 0x00], count: 8)))
        let bits = try converted("bits.png")
        XCTAssertTrue(PDFBytes.contains(readBytes(path(bits.pdf)), "/DeviceGray"))
        let gray = try reference(bits.pdf, dpi: 72)
        XCTAssertTrue(Pixels.isClose(gray.pixel(3, 3), (255, 255, 255)))
        XCTAssertTrue(Pixels.isClose(gray.pixel(12, 3), (0, 0, 0)))
    }

    func testMultiPageTIFFGivesOnePagePerDirectory() throws {
        let pages = [(40, 30, 100), (20, 60, 200), (10, 10, 72)].map { w, h, dpi in
            Fixtures.TIFFPage(width: w, height: h, rgb: Fixtures.redCorner(width: w, height: h), dpi: dpi)
        }
        write("scan.tif", Fixtures.tiff(pages))
        let info = try ImageConverter.probe(try input("scan.tif"), description: "scan.tif")
        XCTAssertEqual(info.format, .tiff)
        XCTAssertEqual(info.pages, 3)
        XCTAssertEqual(info.size, PixelSize(width: 40, height: 30))
        XCTAssertEqual(info.xDPI, 100)
        let result = try converted("scan.tif")
        XCTAssertEqual(result.pages, 3)
        let boxes = Fixtures.mediaBoxes(readBytes(path(result.pdf)))
        XCTAssertEqual(boxes.map(\.width), [28.8, 7.2, 10])
        XCTAssertEqual(boxes.map(\.height), [21.6, 21.6, 10])
        let first = try reference(result.pdf, page: 1, dpi: 100)
        XCTAssertEqual(first.size, PixelSize(width: 40, height: 30))
        XCTAssertTrue(Pixels.isClose(first.pixel(2, 2), (255, 0, 0)))
        XCTAssertTrue(Pixels.isClose(first.pixel(30, 20), (255, 255, 255)))

        // Orientation 6 (stored top edge on the right) turns the page.
        write("turned.tif", Fixtures.tiff([Fixtures.TIFFPage(width: 40, height: 20, rgb: Fixtures.redCorner(width: 40, height: 20), dpi: 72, orientation: 6)]))
        let turned = try reference(try converted("turned.tif").pdf, dpi: 72)
        XCTAssertEqual(turned.size, PixelSize(width: 20, height: 40))
        XCTAssertTrue(Pixels.isClose(turned.pixel(17, 2), (255, 0, 0)), "\(turned.pixel(17, 2))")
        XCTAssertTrue(Pixels.isClose(turned.pixel(2, 2), (255, 255, 255)))
    }

    func testDamagedImagesAreRefusedWithAReason() throws {
        write("shapes.pdf", Fixtures.pdf(pages: [Fixtures.shapes]))
        let jpeg = try pdftoppmImage("shapes.pdf", format: "-jpeg", dpi: 30)
        write("cut.jpg", Array(jpeg.prefix(jpeg.count / 2)))
        assertError(.damaged, containing: "the JPEG is truncated") {
            try ImageConverter.convertToPDF(try input("cut.jpg"), description: "cut.jpg", output: try output("cut.pdf"))
        }
        assertError(.damaged, containing: "truncated") { _ = try ImageConverter.probe(try input("cut.jpg"), description: "cut.jpg") }
        write("head.jpg", Array(jpeg.prefix(60)))
        assertError(.damaged, containing: "the JPEG is truncated") { _ = try ImageConverter.probe(try input("head.jpg"), description: "head.jpg") }
        write("nosos.jpg", [0xFF, 0xD8, 0xFF, 0xD9])
        assertError(.damaged, containing: "no image data") { _ = try ImageConverter.probe(try input("nosos.jpg"), description: "nosos.jpg") }

        let png = Fixtures.png(width: 40, height: 30, colorType: 2, bitDepth: 8, rows: Array(repeating: Array(repeating: 200, count: 120), count: 30))
        write("cut.png", Array(png.prefix(png.count - 40)))
        assertError(.damaged, containing: "cut.png: the PNG") {
            try ImageConverter.convertToPDF(try input("cut.png"), description: "cut.png", output: try output("cutpng.pdf"))
        }
        var corrupt = png
        corrupt[png.count - 30] ^= 0xFF // inside IDAT: the CRC no longer matches
        write("crc.png", corrupt)
        assertError(.damaged, containing: "crc.png") {
            try ImageConverter.convertToPDF(try input("crc.png"), description: "crc.png", output: try output("crc.pdf"))
        }
        let tiff = Fixtures.tiff([Fixtures.TIFFPage(width: 40, height: 30, rgb: Fixtures.redCorner(width: 40, height: 30), dpi: 72)])
        write("cut.tif", Array(tiff.prefix(100)))
        assertError(.damaged, containing: "the TIFF is damaged") {
            try ImageConverter.convertToPDF(try input("cut.tif"), description: "cut.tif", output: try output("cuttif.pdf"))
        }

        write("notes.txt", Array("just some text, not an image\n".utf8))
        assertError(.notAnImage, containing: "notes.txt: the file is not a JPEG, PNG or TIFF image") {
            try ImageConverter.convertToPDF(try input("notes.txt"), description: "notes.txt", output: try output("notes.pdf"))
        }
        write("anim.gif", Array("GIF89a".utf8) + [0, 0, 0, 0])
        assertError(.unsupported, containing: "GIF") { _ = try ImageConverter.probe(try input("anim.gif"), description: "anim.gif") }
        write("empty.png", [])
        assertError(.damaged, containing: "empty") { _ = try ImageConverter.probe(try input("empty.png"), description: "empty.png") }
    }

    func testAbsurdImageDimensionsAreRefusedBeforeDecoding() throws {
        // A valid-looking 30000 x 30000 PNG header with next to no data.
        write("huge.png", Fixtures.png(width: 30000, height: 30000, colorType: 2, bitDepth: 8, rows: [[0, 0, 0]]))
        assertError(.tooLarge, containing: "900.0 megapixels") {
            try ImageConverter.convertToPDF(try input("huge.png"), description: "huge.png", output: try output("huge.pdf"))
        }
        XCTAssertEqual(try ImageConverter.probe(try input("huge.png"), description: "huge.png").size, PixelSize(width: 30000, height: 30000))
        // A JPEG whose frame header claims 65535 x 65535.
        let sof: [UInt8] = [0xFF, 0xC0, 0, 17, 8, 0xFF, 0xFF, 0xFF, 0xFF, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
        let sos: [UInt8] = [0xFF, 0xDA, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0]
        write("huge.jpg", [0xFF, 0xD8] + sof + sos + [0x12, 0x34] + [0xFF, 0xD9])
        assertError(.tooLarge, containing: "megapixels") {
            try ImageConverter.convertToPDF(try input("huge.jpg"), description: "huge.jpg", output: try output("hugejpg.pdf"))
        }
        // The caller's limit applies to every page of a TIFF.
        let tiff = Fixtures.tiff([Fixtures.TIFFPage(width: 40, height: 30, rgb: Fixtures.redCorner(width: 40, height: 30), dpi: 72)])
        write("small.tif", tiff)
        assertError(.tooLarge, containing: "page 1") {
            try ImageConverter.convertToPDF(try input("small.tif"), description: "small.tif", output: try output("small.pdf"), maxPixels: 1000)
        }
    }
}

// MARK: - fixtures

enum Tools {
    static let pdftoppm = "/usr/bin/pdftoppm"
}

private enum Fixtures {
    /// Colored shapes, a line and text on a US Letter page.
    static let shapes = "1 0 0 rg 72 600 200 100 re f 0 0 1 rg 300 100 100 300 re f 0 g BT /F1 36 Tf 72 700 Td (Hello hotfolder) Tj ET 0 0.5 0 RG 4 w 50 50 m 560 740 l S"

    /// A PDF with one page per content stream, all of one size.
    static func pdf(pages: [String], width: Double = 612, height: Double = 792, rotate: Int = 0) -> [UInt8] {
        var objects = ["<< /Type /Catalog /Pages 2 0 R >>", "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
        var kids: [Int] = []
        for content in pages {
            objects.append("<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream")
            let contentNumber = objects.count
            let rotation = rotate == 0 ? "" : " /Rotate \(rotate)"
            objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(width) \(height)]\(rotation) /Resources << /Font << /F1 3 0 R >> >> /Contents \(contentNumber) 0 R >>")
            kids.append(objects.count)
        }
        objects[1] = "<< /Type /Pages /Kids [\(kids.map { "\($0) 0 R" }.joined(separator: " "))] /Count \(kids.count) >>"
        var out = Array("%PDF-1.4\n".utf8)
        var offsets: [Int] = []
        for (i, body) in objects.enumerated() {
            offsets.append(out.count)
            out += Array("\(i + 1) 0 obj\n\(body)\nendobj\n".utf8)
        }
        let xref = out.count
        var table = "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { table += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n" }
        table += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return out + Array(table.utf8)
    }

    /// The /MediaBox of every page of a PDF this converter wrote, in order.
    static func mediaBoxes(_ pdf: [UInt8]) -> [(width: Double, height: Double)] {
        let text = String(decoding: pdf, as: UTF8.self)
        var result: [(Double, Double)] = []
        var rest = text[...]
        while let r = rest.range(of: "/MediaBox [0 0 ") {
            let numbers = rest[r.upperBound...].prefix { $0 != "]" }.split(separator: " ").compactMap { Double($0) }
            if numbers.count == 2 { result.append((numbers[0], numbers[1])) }
            rest = rest[r.upperBound...]
        }
        return result
    }

    static func find(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
        Data(haystack).range(of: Data(needle)).map { $0.lowerBound }
    }

    /// Inserts an Exif APP1 segment with only an orientation tag after SOI.
    static func withEXIFOrientation(_ jpeg: [UInt8], _ orientation: UInt8) -> [UInt8] {
        let tiff: [UInt8] = Array("MM".utf8) + [0, 42, 0, 0, 0, 8, 0, 1] + [0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, orientation, 0, 0] + [0, 0, 0, 0]
        let segment = Array("Exif".utf8) + [0, 0] + tiff
        let length = segment.count + 2
        return Array(jpeg.prefix(2)) + [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + segment + Array(jpeg.dropFirst(2))
    }

    // MARK: PNG, written with stored (uncompressed) deflate blocks

    /// `rows` are raw scanlines without the filter byte.
    static func png(width: Int, height: Int, colorType: UInt8, bitDepth: UInt8, rows: [[UInt8]],
                    palette: [UInt8]? = nil, transparency: [UInt8]? = nil, pixelsPerMeter: UInt32? = nil) -> [UInt8] {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += chunk("IHDR", be32(UInt32(width)) + be32(UInt32(height)) + [bitDepth, colorType, 0, 0, 0])
        if let pixelsPerMeter { out += chunk("pHYs", be32(pixelsPerMeter) + be32(pixelsPerMeter) + [1]) }
        if let palette { out += chunk("PLTE", palette) }
        if let transparency { out += chunk("tRNS", transparency) }
        out += chunk("IDAT", zlibStored(rows.flatMap { [0] + $0 }))
        out += chunk("IEND", [])
        return out
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(crc32(body))
    }

    static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = crcTable[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var i = 0
        repeat {
            let n = min(65535, data.count - i)
            out.append(i + n >= data.count ? 1 : 0)
            out += [UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[i..<(i + n)]
            i += n
        } while i < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return out + be32((b << 16) | a)
    }

    // MARK: TIFF, uncompressed RGB, one strip per page

    struct TIFFPage {
        var width: Int
        var height: Int
        var rgb: [UInt8]
        var dpi: Int
        var orientation: Int = 1
    }

    /// Red in the top-left quarter, white elsewhere.
    static func redCorner(width: Int, height: Int) -> [UInt8] {
        (0..<height).flatMap { y in (0..<width).flatMap { x in x < width / 4 && y < height / 4 ? [255, 0, 0] : [255, 255, 255] as [UInt8] } }
    }

    static func tiff(_ pages: [TIFFPage]) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8((v >> 24) & 0xFF)] }
        var out: [UInt8] = [0x49, 0x49, 42, 0, 0, 0, 0, 0]
        var nextPointer = 4
        for page in pages {
            let data = out.count
            out += page.rgb
            if out.count % 2 == 1 { out.append(0) }
            let bits = out.count
            out += le16(8) + le16(8) + le16(8)
            let resolution = out.count
            out += le32(page.dpi) + le32(1) + le32(page.dpi) + le32(1)
            // (tag, type, count, value): type 3 SHORT, 4 LONG, 5 RATIONAL.
            let entries: [(Int, Int, Int, Int)] = [
                (256, 4, 1, page.width), (257, 4, 1, page.height), (258, 3, 3, bits), (259, 3, 1, 1), (262, 3, 1, 2),
                (273, 4, 1, data), (274, 3, 1, page.orientation), (277, 3, 1, 3), (278, 4, 1, page.height),
                (279, 4, 1, page.rgb.count), (282, 5, 1, resolution), (283, 5, 1, resolution + 8), (296, 3, 1, 2),
            ]
            let ifd = out.count
            out.replaceSubrange(nextPointer..<(nextPointer + 4), with: le32(ifd))
            out += le16(entries.count)
            for (tag, type, count, value) in entries {
                out += le16(tag) + le16(type) + le32(count) + (type == 3 && count == 1 ? le16(value) + [0, 0] : le32(value))
            }
            nextPointer = out.count
            out += [0, 0, 0, 0]
        }
        return out
    }
}

/// pdftoppm's default output: binary PPM (P6).
enum PPM {
    static func parse(_ bytes: [UInt8]) -> RGBImage? {
        var fields: [Int] = []
        var i = 2
        guard bytes.count > 2, bytes[0] == UInt8(ascii: "P"), bytes[1] == UInt8(ascii: "6") else { return nil }
        while fields.count < 3 && i < bytes.count {
            while i < bytes.count && (bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09) { i += 1 }
            var value = 0
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                value = value * 10 + Int(bytes[i] - 0x30)
                i += 1
            }
            fields.append(value)
        }
        i += 1 // the single whitespace after the maximum value
        guard fields.count == 3, fields[2] == 255 else { return nil }
        let count = fields[0] * fields[1] * 3
        guard bytes.count >= i + count else { return nil }
        return RGBImage(size: PixelSize(width: fields[0], height: fields[1]), pixels: Array(bytes[i..<(i + count)]))
    }
}

enum Pixels {
    /// Mean over all samples; infinite when the sizes differ.
    static func meanAbsoluteDifference(_ a: RGBImage, _ b: RGBImage) -> Double {
        guard a.size == b.size, a.pixels.count == b.pixels.count, !a.pixels.isEmpty else { return .infinity }
        var total = 0
        for i in 0..<a.pixels.count { total += abs(Int(a.pixels[i]) - Int(b.pixels[i])) }
        return Double(total) / Double(a.pixels.count)
    }

    static func isClose(_ p: (red: UInt8, green: UInt8, blue: UInt8), _ q: (UInt8, UInt8, UInt8), tolerance: Int = 8) -> Bool {
        abs(Int(p.red) - Int(q.0)) <= tolerance && abs(Int(p.green) - Int(q.1)) <= tolerance && abs(Int(p.blue) - Int(q.2)) <= tolerance
    }
}
