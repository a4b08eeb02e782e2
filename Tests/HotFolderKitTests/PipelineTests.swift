import Foundation
import XCTest
@testable import HotFolderKit

/// The generation pipeline on real PDFs through real libqpdf: every output is
/// reopened and checked.
final class PipelineTests: XCTestCase {
    /// Five pages; annotations with appearances on pages 2 and 4, only a link on page 3.
    static let fivePages: TestPDF = {
        var pdf = TestPDF(pages: 5, title: "Five pages")
        pdf.annotations = [1: [.square("a2")], 2: [.link("l3")], 3: [.freeText("a4")]]
        return pdf
    }()

    /// Page 1: Square and FreeText with appearances, a Text note without one,
    /// a Link. Page 2: none. Page 3: squares that are hidden, NoView (but
    /// printable), and screen-only (no print flag).
    static let annotated: TestPDF = {
        var pdf = TestPDF(pages: 3, title: "Annotated")
        pdf.annotations = [
            0: [.square("sq1"), .freeText("ft1"), .text("tx1"), .link("ln1")],
            2: [.square("hidden", flags: [.print, .hidden]), .square("noview", flags: [.print, .noView]), .square("screen", flags: [])],
        ]
        return pdf
    }()

    // MARK: - page selection

    func pages(_ selection: String, of pdf: TestPDF = fivePages, file: StaticString = #filePath, line: UInt = #line) throws -> (markers: [Int], output: StagedOutput) {
        let run = try PipelineRun(pdf, folderLines: "export.pages = \(selection)\n")
        let result = try run.result(file: file, line: line)
        let output = try XCTUnwrap(result.outputs.first, file: file, line: line)
        let summary = try run.summary(file: file, line: line)
        let markers = PDFBytes.pageMarkers(try run.outputBytes(file: file, line: line))
        XCTAssertEqual(summary.pages, markers.count, "pages of \(selection)", file: file, line: line)
        XCTAssertEqual(output.pageCount, markers.count, "StagedOutput.pageCount of \(selection)", file: file, line: line)
        return (markers, output)
    }

    func testAllPagesByDefault() throws {
        let run = try PipelineRun(Self.fivePages)
        let result = try run.result()
        XCTAssertEqual(result.facts.pages, 5)
        XCTAssertEqual(result.facts.type, .pdf)
        XCTAssertEqual(result.facts.title, "Five pages")
        XCTAssertEqual(result.outputs.map(\.destination), [.export])
        XCTAssertEqual(result.outputs.first?.pages, "all")
        XCTAssertEqual(PDFBytes.pageMarkers(try run.outputBytes()), [1, 2, 3, 4, 5])
        XCTAssertEqual(try run.summary().perPage, [0, 1, 0, 1, 0])
        XCTAssertEqual(result.warnings, [])
    }

    func testFirstAndLast() throws {
        XCTAssertEqual(try pages("first").markers, [1])
        XCTAssertEqual(try pages("last").markers, [5])
        XCTAssertEqual(try pages("first").output.pages, "first")
    }

    func testRanges() throws {
        XCTAssertEqual(try pages("1-2,4").markers, [1, 2, 4])
        XCTAssertEqual(try pages("4-").markers, [4, 5])
        XCTAssertEqual(try pages("3").markers, [3])
        XCTAssertEqual(try pages("5,1").markers, [1, 5], "document order, whatever the order in the range list")
        XCTAssertEqual(try pages("2-3,3-4").markers, [2, 3, 4], "overlapping ranges keep a page once")
        XCTAssertEqual(try pages("2,9-").markers, [2], "pages past the end are ignored")
        XCTAssertEqual(try pages("4-99").markers, [4, 5])
        XCTAssertEqual(try pages("1-5").markers, [1, 2, 3, 4, 5])
    }

    func testRangesOutsideTheDocumentFail() throws {
        let run = try PipelineRun(Self.fivePages, folderLines: "export.pages = 7-9\n")
        let failure = try run.failure()
        XCTAssertEqual(failure.step, .options)
        XCTAssertTrue(failure.reason.contains("export.pages = 7-9"), failure.reason)
        XCTAssertTrue(failure.reason.contains("5-page"), failure.reason)
        XCTAssertFalse(failure.transient)
    }

    func testAnnotatedPagesIgnoreLinks() throws {
        XCTAssertEqual(try pages("annotated").markers, [2, 4])
    }

    func testAnnotatedWithoutAnnotationsFails() throws {
        var pdf = TestPDF(pages: 3)
        pdf.annotations = [1: [.link("only-a-link")]]
        let failure = try PipelineRun(pdf, folderLines: "export.pages = annotated\n").failure()
        XCTAssertEqual(failure.step, .options)
        XCTAssertTrue(failure.reason.contains("no page of this document carries annotations"), failure.reason)
    }

    func testFirstAllowedSelectionIsUsed() throws {
        XCTAssertEqual(try pages("last, first").markers, [5])
        XCTAssertEqual(try pages("2-3, first").markers, [2, 3])
    }

    func testSinglePageDocumentAlwaysBehavesAsAll() throws {
        let onePage = TestPDF(pages: 1)
        for selection in ["last", "3-4", "annotated", "first"] {
            XCTAssertEqual(try pages(selection, of: onePage).markers, [1], selection)
            XCTAssertEqual(try pages(selection, of: onePage).output.pages, "all", selection)
        }
    }

    // MARK: - annotations

    func annotations(_ mode: String, _ pdf: TestPDF = annotated, file: StaticString = #filePath, line: UInt = #line) throws -> (run: PipelineRun, bytes: [UInt8], summary: PDFSummary) {
        let run = try PipelineRun(pdf, folderLines: "export.annotations = \(mode)\n")
        let bytes = try run.outputBytes(file: file, line: line)
        return (run, bytes, try run.summary(file: file, line: line))
    }

    func testEmbedKeepsEverything() throws {
        let (run, bytes, summary) = try annotations("embed")
        XCTAssertEqual(summary.perPage, [3, 0, 3])
        XCTAssertEqual(PDFBytes.count(bytes, "/Subtype /Link"), 1)
        for id in ["sq1", "ft1", "tx1", "ln1", "hidden", "noview", "screen"] {
            XCTAssertTrue(PDFBytes.contains(bytes, "/NM (\(id))"), id)
        }
        XCTAssertEqual(run.warnings, [])
        XCTAssertEqual(try run.result().outputs.first?.annotations, .embed)
    }

    func testFlattenBakesWhatAScreenShowsAndKeepsLinks() throws {
        let (run, bytes, summary) = try annotations("flatten")
        XCTAssertEqual(summary.annotations, 0, "annotations with appearances are page content now")
        XCTAssertEqual(summary.perPage, [0, 0, 0])
        XCTAssertEqual(PDFBytes.count(bytes, "/Subtype /Link"), 1, "the link stays live")
        XCTAssertTrue(PDFBytes.contains(bytes, "/NM (ln1)"))
        for id in ["sq1", "ft1", "tx1", "hidden", "noview", "screen"] {
            XCTAssertFalse(PDFBytes.contains(bytes, "/NM (\(id))"), "\(id) is no annotation any more")
        }
        // A baked appearance stays in the file as a page XObject; a dropped one is gone.
        XCTAssertTrue(PDFBytes.contains(bytes, "/HFTestAP (sq1)"))
        XCTAssertTrue(PDFBytes.contains(bytes, "/HFTestAP (ft1)"))
        XCTAssertTrue(PDFBytes.contains(bytes, "/HFTestAP (screen)"), "no print flag, but a screen shows it")
        XCTAssertFalse(PDFBytes.contains(bytes, "/HFTestAP (hidden)"), "hidden is not shown")
        XCTAssertFalse(PDFBytes.contains(bytes, "/HFTestAP (noview)"), "NoView is not shown on a screen")
        XCTAssertEqual(PDFBytes.pageMarkers(bytes), [1, 2, 3])
        XCTAssertEqual(try run.result().outputs.first?.annotations, .flatten)
    }

    func testFlattenForPrintKeepsOnlyPrintableContent() throws {
        let (run, bytes, summary) = try annotations("flatten-for-print")
        XCTAssertEqual(summary.annotations, 0)
        XCTAssertEqual(PDFBytes.count(bytes, "/Subtype /Link"), 0, "nothing interactive is left on paper")
        XCTAssertEqual(PDFBytes.count(bytes, "/Annots"), 0)
        XCTAssertTrue(PDFBytes.contains(bytes, "/HFTestAP (sq1)"))
        XCTAssertTrue(PDFBytes.contains(bytes, "/HFTestAP (ft1)"))
        XCTAssertFalse(PDFBytes.contains(bytes, "/HFTestAP (hidden)"), "hidden is never printed")
        XCTAssertFalse(PDFBytes.contains(bytes, "/HFTestAP (screen)"), "no print flag: not printed")
        // PDF 32000-1 12.5.3: NoView "may be printed (depending on the setting of the Print flag)".
        XCTAssertTrue(PDFBytes.contains(bytes, "/HFTestAP (noview)"), "NoView with Print is printed")
        XCTAssertTrue(run.warnings.contains { $0.contains("Text annotation has no appearance stream") }, "\(run.warnings)")
    }

    func testRemoveDropsAnnotationsAndForm() throws {
        var pdf = Self.annotated
        pdf.formFieldValue = "filled in"
        let (run, bytes, summary) = try annotations("remove", pdf)
        XCTAssertEqual(summary.annotations, 0)
        XCTAssertFalse(summary.hasForm)
        XCTAssertEqual(PDFBytes.count(bytes, "/Annots"), 0)
        XCTAssertEqual(PDFBytes.count(bytes, "/AcroForm"), 0)
        XCTAssertEqual(PDFBytes.count(bytes, "/Subtype /Link"), 0)
        XCTAssertEqual(PDFBytes.count(bytes, "/HFTestAP"), 0, "nothing was baked into the pages")
        XCTAssertEqual(run.warnings, [], "removing is what was asked: no warning")
        XCTAssertEqual(summary.pages, 3)
    }

    func testAnnotationWithoutAppearanceIsAWarningNeverSilence() throws {
        var pdf = TestPDF(pages: 2)
        pdf.annotations = [1: [.text("note")]]
        let (run, bytes, summary) = try annotations("flatten", pdf)
        XCTAssertEqual(summary.annotations, 0)
        XCTAssertFalse(PDFBytes.contains(bytes, "/NM (note)"))
        let warnings = run.warnings
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertTrue(warnings.first?.contains("page 2") == true, "\(warnings)")
        XCTAssertTrue(warnings.first?.contains("Text annotation has no appearance stream and was dropped") == true, "\(warnings)")
    }

    func testNeedAppearancesFormIsFlattened() throws {
        let pdf = TestPDF(pages: 1, formFieldValue: "Hello form")
        for mode in ["flatten", "flatten-for-print"] {
            let (run, bytes, summary) = try annotations(mode, pdf)
            XCTAssertEqual(summary.annotations, 0, mode)
            XCTAssertFalse(summary.hasForm, mode)
            XCTAssertFalse(PDFBytes.contains(bytes, "/Widget"), mode)
            XCTAssertFalse(PDFBytes.contains(bytes, "/AcroForm"), mode)
            XCTAssertFalse(PDFBytes.contains(bytes, "/NeedAppearances"), mode)
            // The generated appearance is drawn on the page, not dropped.
            XCTAssertTrue(PDFBytes.contains(bytes, "/Fxo"), "\(mode): the field's appearance is page content")
            XCTAssertFalse(run.warnings.contains { $0.contains("Widget") }, "\(mode): \(run.warnings)")
        }
    }

    func testEmbedKeepsTheForm() throws {
        let (_, _, summary) = try annotations("embed", TestPDF(pages: 1, formFieldValue: "kept"))
        XCTAssertTrue(summary.hasForm)
        XCTAssertEqual(summary.annotations, 1)
    }

    func testAnnotationsWithPageSelection() throws {
        let run = try PipelineRun(Self.annotated, folderLines: "export.pages = 3\nexport.annotations = flatten\n")
        let bytes = try run.outputBytes()
        XCTAssertEqual(PDFBytes.pageMarkers(bytes), [3])
        XCTAssertTrue(PDFBytes.contains(bytes, "/HFTestAP (screen)"))
        XCTAssertFalse(PDFBytes.contains(bytes, "/HFTestAP (sq1)"), "page 1 is not in the output")
        XCTAssertFalse(PDFBytes.contains(bytes, "/Subtype /Link"), "page 1's link went with its page")
    }

    // MARK: - format and title

    func testOriginalIsByteIdentical() throws {
        var pdf = Self.annotated
        pdf.trailerComment = "not rewritten"
        let input = pdf.bytes
        let run = try PipelineRun(input, name: "Report.PDF", folderLines: "export.format = original\nexport.annotations = flatten\n")
        let result = try run.result()
        XCTAssertEqual(result.outputs.first?.format, .original)
        XCTAssertEqual(result.outputs.first?.ext, "PDF")
        XCTAssertEqual(try run.outputBytes(), input)
    }

    func testOriginalOfANonPDF() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 100)
        let run = try PipelineRun(png, name: "scan.png", folderLines: "export.format = original\n")
        let result = try run.result()
        XCTAssertEqual(result.facts.type, .png)
        XCTAssertEqual(result.outputs.first?.ext, "png")
        XCTAssertEqual(try run.outputBytes(), png)
    }

    func testUnicodeTitle() throws {
        let run = try PipelineRun(TestPDF(pages: 2, title: "Old"), folderLines: "export.title = Grüße — 日本語\n")
        XCTAssertEqual(try run.summary().title, "Grüße — 日本語")
        XCTAssertEqual(try run.result().facts.title, "Old", "facts describe the input")
    }

    func testTitleTemplate() throws {
        let run = try PipelineRun(TestPDF(pages: 1, title: "Quarterly"), name: "q3 report.pdf", folderLines: "export.title = {title} / {stem} ({folder})\n")
        XCTAssertEqual(try run.summary().title, "Quarterly / q3 report (test)")
        let untitled = try PipelineRun(TestPDF(pages: 1), name: "scan-0001.pdf", folderLines: "export.title = {title|stem}\n")
        XCTAssertEqual(try untitled.summary().title, "scan-0001")
    }

    func testDocumentTitleIsKeptByDefault() throws {
        let run = try PipelineRun(TestPDF(pages: 1, title: "Ünïcödé ✓"))
        XCTAssertEqual(try run.summary().title, "Ünïcödé ✓")
    }

    // MARK: - not PDFs, damaged PDFs

    func testNotAPDF() throws {
        let cases: [(String, [UInt8], String)] = [
            ("empty.pdf", [], "the file is empty (0 bytes)"),
            ("image.pdf", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array(repeating: 0, count: 64), "PNG image"),
            ("photo.pdf", [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0, count: 64), "JPEG image"),
            ("letter.pdf", Array("Dear reader,\nthis is text.\n".utf8), "plain text"),
            ("random.pdf", randomBytes(4096, seed: 42), "unrecognized binary data"),
        ]
        for (name, bytes, expected) in cases {
            let failure = try PipelineRun(bytes, name: name).failure()
            XCTAssertEqual(failure.step, .identify, name)
            XCTAssertTrue(failure.reason.contains(expected), "\(name): \(failure.reason)")
            XCTAssertFalse(failure.transient, name)
            XCTAssertFalse(failure.remedy.isEmpty, name)
        }
    }

    func testTruncatedPDFFails() throws {
        let whole = TestPDF(pages: 3).bytes
        let failure = try PipelineRun(Array(whole.prefix(60)), name: "cut.pdf").failure()
        XCTAssertEqual(failure.step, .open)
        XCTAssertTrue(failure.reason.contains("damaged"), failure.reason)
        XCTAssertFalse(failure.transient)
    }

    func testBrokenXrefIsRepairedWithWarnings() throws {
        var bytes = TestPDF(pages: 2).bytes
        // Shift every object by inserting bytes after the header: all xref offsets are now wrong.
        bytes.insert(contentsOf: Array("% padding that moves every object\n".utf8), at: 15)
        let run = try PipelineRun(bytes, name: "shifted.pdf")
        XCTAssertEqual(try run.summary().pages, 2)
        XCTAssertEqual(PDFBytes.pageMarkers(try run.outputBytes()), [1, 2])
        XCTAssertFalse(run.warnings.isEmpty, "the repair is reported")
    }

    func testSymlinkIsNotADocument() throws {
        let temp = TemporaryFolder("hf-pipeline")
        defer { withExtendedLifetime(temp) {} } // the folder goes only when the test ends
        let drop = temp.sub("drop")
        let config = try configuration("[folder test]\npath = drop\nexport.to = out\n", in: temp)
        let folder = try XCTUnwrap(config.folder(named: "test"))
        try TestPDF(pages: 1).write(to: temp.path + "/real.pdf")
        XCTAssertEqual(symlink(temp.path + "/real.pdf", drop + "/link.pdf"), 0)
        let area = try JobArea.open(path: instancePath(of: drop))
        guard case .claimed(let job) = try JobFolder.claim("link.pdf", from: try Directory(path: drop), relativeFolder: "", into: area) else {
            return XCTFail("not claimed")
        }
        do {
            _ = try Pipeline(folder: folder, job: job).run()
            XCTFail("a symbolic link was processed")
        } catch {
            XCTAssertEqual(error.step, .identify)
            XCTAssertTrue(error.reason.contains("symbolic link"), error.reason)
        }
    }

    // MARK: - encryption (corpus)

    func testEncryptedWithoutPasswordIsWrittenDecrypted() throws {
        let corpus = try Corpus.require()
        let run = try PipelineRun(readBytes(corpus + "/enc--qpdf--V4-aes.pdf"), name: "aes.pdf", folderLines: "export.annotations = flatten\n")
        let result = try run.result()
        XCTAssertTrue(result.facts.encrypted)
        XCTAssertEqual(result.facts.pages, 30)
        let summary = try run.summary()
        XCTAssertFalse(summary.encrypted, "the output must not keep the input's encryption")
        XCTAssertEqual(summary.pages, 30)
        XCTAssertFalse(PDFBytes.contains(try run.outputBytes(), "/Encrypt"))
    }

    func testPasswordNeeded() throws {
        let corpus = try Corpus.require()
        let bytes = readBytes(corpus + "/enc--qpdf--20-pages.pdf")
        let failure = try PipelineRun(bytes, name: "secret.pdf").failure()
        XCTAssertEqual(failure.step, .open)
        XCTAssertEqual(failure.reason, "the PDF is protected by a password")
        XCTAssertTrue(failure.remedy.contains("password ="), failure.remedy)
        XCTAssertFalse(failure.transient)

        let wrong = try PipelineRun(bytes, name: "secret.pdf", folderLines: "password = guess\n").failure()
        XCTAssertEqual(wrong.step, .open)
        XCTAssertTrue(wrong.reason.contains("the folder's password does not open it"), wrong.reason)

        let right = try PipelineRun(bytes, name: "secret.pdf", folderLines: "password = user\nexport.pages = 2-3\n")
        XCTAssertEqual(try right.result().facts.pages, 20)
        let summary = try right.summary()
        XCTAssertEqual(summary.pages, 2)
        XCTAssertFalse(summary.encrypted)
    }

    func testRecoverableDamagedCorpusFilesAreProcessedWithWarnings() throws {
        let corpus = try Corpus.require()
        for (name, pages) in [("damaged--qpdf--xref-errors.pdf", 1), ("damaged--qpdf--append-xref-loop.pdf", 30)] {
            let run = try PipelineRun(readBytes(corpus + "/" + name), name: name, folderLines: "export.annotations = flatten\n")
            XCTAssertEqual(try run.summary().pages, pages, name)
            XCTAssertFalse(run.warnings.isEmpty, "\(name): qpdf's recovery is reported")
        }
    }

    func testSignedDocumentWarnsThatTheSignatureIsGone() throws {
        let corpus = try Corpus.require()
        let run = try PipelineRun(readBytes(corpus + "/form--qpdf--digitally-signed.pdf"), name: "signed.pdf", folderLines: "export.annotations = flatten\n")
        XCTAssertTrue(try run.result().facts.signed)
        XCTAssertTrue(run.warnings.contains { $0.contains("digitally signed") }, "\(run.warnings)")
    }

    func testCorpusNeedAppearancesFormIsFlattened() throws {
        let corpus = try Corpus.require()
        let run = try PipelineRun(readBytes(corpus + "/form--qpdf--need-appearances.pdf"), name: "form.pdf", folderLines: "export.annotations = flatten\n")
        let summary = try run.summary()
        XCTAssertEqual(summary.annotations, 0, "qpdf alone leaves 15 widgets here (INDEX.tsv); the service must not")
        XCTAssertFalse(summary.hasForm)
    }
}

/// Deterministic bytes that match no magic number (xorshift).
func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var x = seed | 1
    var out: [UInt8] = [0x00, 0xFE]
    while out.count < count {
        x ^= x << 13
        x ^= x >> 7
        x ^= x << 17
        out.append(UInt8(truncatingIfNeeded: x))
    }
    return out
}
