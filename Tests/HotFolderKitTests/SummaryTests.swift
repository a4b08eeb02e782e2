import Foundation
import Synchronization
import XCTest
@testable import HotFolderKit

/// `annotations = summary`: the annotation list read from a PDF, the summary
/// pages written with pango/cairo, and the summary appended to the output.
final class SummaryTests: XCTestCase {
    // MARK: - reading annotations

    func testAnnotationsGivePagesTypesAuthorsDatesAndTexts() throws {
        let temp = TemporaryFolder("hf-summary")
        let pdf = AnnotatedPDF(pages: [
            .init(annotations: [
                annotation("Text", [("/T", utf16("Jürgen Groß")), ("/M", literal("D:20240501140312+02'00'")),
                                    ("/Contents", literal([0x47, 0x72, 0xFC, 0xDF, 0x65, 0x20, 0x84, 0x20, 0xA0])), ("/F", raw("4"))]),
                annotation("Link", [("/T", literal("not a comment")), ("/Contents", literal("link"))]),
                annotation("Popup", [("/Contents", literal("popup"))]),
            ]),
            .init(),
            .init(annotations: [
                // Raw UTF-8 without a byte order mark, as some producers write it.
                annotation("Highlight", [("/T", literal(Array("Zoë Müller".utf8))), ("/CreationDate", literal("D:20230102")),
                                         ("/Contents", utf16("中文批注 𓀀"))]),
                annotation("Widget", [("/FT", raw("/Tx")), ("/T", literal("field")), ("/Contents", literal("form field"))]),
                annotation("Square", [("/M", literal("yesterday")), ("/Subj", utf16("Ελέγχος")), ("/F", raw("6"))]),
                annotation("FreeText", [("/Contents", literal("quote \" backslash \\ tab\tnew\nline")),
                                        ("/M", literal("D:20240229235959Z"))]),
            ]),
        ])
        let path = try pdf.write(to: temp.path + "/annotated.pdf")
        let document = try openPDF(path)

        let all = try document.annotations(pages: nil)
        XCTAssertEqual(all, [
            AnnotationRecord(page: 1, type: "Text", author: "Jürgen Groß", date: "2024-05-01T14:03:12+02:00",
                             text: "Grüße — €", flags: 4),
            AnnotationRecord(page: 3, type: "Highlight", author: "Zoë Müller", date: "2023-01-02", text: "中文批注 𓀀"),
            AnnotationRecord(page: 3, type: "Square", subject: "Ελέγχος", date: "yesterday", flags: 6),
            AnnotationRecord(page: 3, type: "FreeText", date: "2024-02-29T23:59:59Z",
                             text: "quote \" backslash \\ tab\tnew\nline"),
        ])
        XCTAssertEqual(try document.annotations(pages: [2]).map(\.page), [3, 3, 3], "page numbers stay the document's")
        XCTAssertEqual(try document.annotations(pages: [1]), [])
        XCTAssertEqual(try document.annotations(pages: [0, 2]), all)
        XCTAssertThrowsError(try document.annotations(pages: [3]), "a page past the end")
        XCTAssertThrowsError(try document.annotations(pages: [Int.max]), "an index that does not fit the C API")
    }

    func testAnnotationListIsValidJSONForHostileStrings() throws {
        let temp = TemporaryFolder("hf-summary")
        let pdf = AnnotatedPDF(pages: [
            .init(annotations: [
                // Control characters in PDFDocEncoding, a lone UTF-16 surrogate, and
                // bytes that are neither UTF-8 nor meaningful PDFDocEncoding.
                annotation("Text", [("/Contents", literal([0x61, 0x01, 0x02, 0x7F, 0x62])), ("/T", raw("<FEFFD8000041>"))]),
                annotation("Text", [("/Contents", literal([0xC3, 0x28, 0xFF]))]),
                annotation("Text", [("/Contents", raw("42")), ("/T", raw("/Name")), ("/M", raw("12"))]),
            ]),
        ])
        let document = try openPDF(try pdf.write(to: temp.path + "/hostile.pdf"))
        let records = try document.annotations(pages: nil)
        XCTAssertEqual(records.count, 3)
        XCTAssertEqual(records.first?.text?.hasPrefix("a\u{01}\u{02}"), true, String(describing: records.first?.text))
        XCTAssertEqual(records.first?.author?.hasSuffix("A"), true, String(describing: records.first?.author))
        XCTAssertNotNil(records[1].text)
        XCTAssertEqual(records[2], AnnotationRecord(page: 1, type: "Text"), "values of the wrong type are left out")
    }

    func testAnnotationsOfCorpusFiles() throws {
        let corpus = try Corpus.require()
        let pypdf = try openPDF(corpus + "/annot--pypdf--annotated_pdf.pdf").annotations(pages: nil)
        XCTAssertEqual(pypdf.map(\.type), ["Text", "Highlight", "Ink"])
        XCTAssertEqual(pypdf.map(\.text), ["This is a text annotation.", "Highlight comment", "Hello world!"])
        XCTAssertEqual(pypdf[2].author, "Lucas")

        let comment = try openPDF(corpus + "/annot--qpdf--comment-annotation.pdf").annotations(pages: nil)
        XCTAssertEqual(comment, [AnnotationRecord(page: 1, type: "Text", author: "Jay Berkenbilt",
                                                  date: "2018-12-31T23:54:55Z", text: "Salad", flags: 28)],
                       "the popup is not listed")

        let links = try openPDF(corpus + "/annot--qpdf--link-annots.pdf").annotations(pages: nil)
        XCTAssertEqual(links, [])
        let form = try openPDF(corpus + "/annot--qpdf--form-filled-by-acrobat.pdf").annotations(pages: nil)
        XCTAssertEqual(form, [], "form fields are not annotations")
    }

    // MARK: - page size

    func testPageSizeFollowsBoxesAndRotation() throws {
        let temp = TemporaryFolder("hf-summary")
        let pdf = AnnotatedPDF(pages: [
            .init(mediaBox: "0 0 842 595"),
            .init(mediaBox: "0 0 420 595"),
            .init(mediaBox: "0 0 612 792", rotate: 90),
            .init(mediaBox: "0 0 612 792", cropBox: "36 36 576 756", rotate: -270),
            .init(mediaBox: "612 792 0 0", cropBox: "-100 -100 300 400"),
        ])
        let document = try openPDF(try pdf.write(to: temp.path + "/sizes.pdf"))
        let sizes = try (0..<5).map { try document.pageSize($0) }
        XCTAssertEqual(sizes.map(\.width), [842, 420, 792, 720, 300])
        XCTAssertEqual(sizes.map(\.height), [595, 595, 612, 540, 400])
        XCTAssertThrowsError(try document.pageSize(5))
        XCTAssertThrowsError(try document.pageSize(-1))
    }

    func testSummaryPagesHaveTheDocumentsPageSize() throws {
        let temp = TemporaryFolder("hf-summary")
        let pdf = AnnotatedPDF(pages: [.init(mediaBox: "0 0 842 595"), .init(mediaBox: "0 0 420 595")])
        let document = try openPDF(try pdf.write(to: temp.path + "/sizes.pdf"))
        for page in 0..<2 {
            let size = try document.pageSize(page)
            let path = temp.path + "/summary-\(page).pdf"
            let result = try writeSummary(sampleRecords, to: path, width: size.width, height: size.height)
            XCTAssertGreaterThanOrEqual(result.pages, 1)
            let summary = try openPDF(path)
            XCTAssertEqual(try summary.info().pages, result.pages)
            for k in 0..<result.pages {
                let written = try summary.pageSize(k)
                XCTAssertEqual(written.width, size.width, accuracy: 0.01)
                XCTAssertEqual(written.height, size.height, accuracy: 0.01)
            }
            try checkWithQPDF(path)
        }
    }

    // MARK: - summary pages

    let sampleRecords: [AnnotationRecord] = [
        AnnotationRecord(page: 1, type: "Highlight", author: "Jürgen Groß", date: "2024-05-01T14:03:12+02:00",
                         text: "Bitte prüfen: Größe, Maße und Übergänge äöüß"),
        AnnotationRecord(page: 2, type: "Text", author: "Γιώργος Παπαδόπουλος", text: "Η διατύπωση είναι ασαφής"),
        AnnotationRecord(page: 2, type: "StrikeOut", author: "Иван Петров", date: "2024-05-02", text: "Удалить этот абзац"),
        AnnotationRecord(page: 3, type: "FreeText", author: "محمد علي", text: "هذا النص يحتاج إلى مراجعة"),
        AnnotationRecord(page: 4, type: "Text", author: "דוד כהן", subject: "הערה", text: "יש לתקן את הטבלה"),
        AnnotationRecord(page: 5, type: "Square", author: "王小明", text: "这里的数据需要更新"),
        AnnotationRecord(page: 5, type: "Ink", author: "山田太郎", date: "yesterday", text: "この図を確認してください"),
    ]

    func testSummaryShowsEveryScriptAsExtractableText() throws {
        let temp = TemporaryFolder("hf-summary")
        let path = temp.path + "/summary.pdf"
        let result = try writeSummary(sampleRecords, title: "Bericht Q2.pdf", to: path)
        XCTAssertEqual(result.unshownCharacters, 0, "every script here has an installed font")
        XCTAssertEqual(result.pages, 1)
        try checkWithQPDF(path)

        let text = normalized(try pdftotext(path))
        XCTAssertTrue(text.contains(normalized("Annotations — Bericht Q2.pdf")), text)
        XCTAssertTrue(text.contains(normalized("7 annotations on 5 pages")), text)
        XCTAssertTrue(text.contains(normalized("Page 1 · Highlight")), text)
        XCTAssertTrue(text.contains(normalized("2024-05-01 14:03")), text)
        XCTAssertTrue(text.contains(normalized("Page 2 · Note")), text)
        for record in sampleRecords {
            for value in [record.author, record.text].compactMap({ $0 }) {
                XCTAssertTrue(text.contains(normalized(value)), "\(value) missing from:\n\(text)")
            }
        }
    }

    func testRightToLeftTextIsRightAligned() throws {
        let temp = TemporaryFolder("hf-summary")
        let path = temp.path + "/rtl.pdf"
        _ = try writeSummary([AnnotationRecord(page: 1, type: "Text", text: "שלום עולם"),
                              AnnotationRecord(page: 1, type: "Text", text: "Hello world")], to: path)
        let layout = try pdftotext(path, layout: true).split(separator: "\n").map(String.init)
        let hebrew = try XCTUnwrap(layout.first { $0.contains("ש") || $0.contains("ם") }, layout.joined(separator: "\n"))
        let latin = try XCTUnwrap(layout.first { $0.contains("Hello") })
        let indent: (String) -> Int = { $0.prefix { $0 == " " }.count }
        XCTAssertGreaterThan(indent(hebrew), indent(latin) + 20, "Hebrew starts at the right margin:\n\(layout.joined(separator: "\n"))")
    }

    func testCharactersNoFontCoversAreCounted() throws {
        for character in ["13000", "10000"] {
            let fonts = try runProcess("/usr/bin/fc-list", [":charset=\(character)"])
            guard fonts.status == 0, fonts.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw XCTSkip("an installed font covers U+\(character): \(fonts.stdout)")
            }
        }
        let temp = TemporaryFolder("hf-summary")
        let path = temp.path + "/unknown.pdf"
        let result = try writeSummary([AnnotationRecord(page: 1, type: "Text", author: "𓀀", text: "Egyptian 𓀀𓀁 and Linear B 𐀀")],
                                      to: path)
        XCTAssertEqual(result.unshownCharacters, 4)
        try checkWithQPDF(path)

        let controls = try writeSummary([AnnotationRecord(page: 1, type: "Text", text: "tab\there\u{01}\u{7F}\u{85}\r\nnext\u{2029}para")],
                                        to: temp.path + "/controls.pdf")
        XCTAssertEqual(controls.unshownCharacters, 0, "control characters are not drawn as boxes")
    }

    func testLongTextFlowsOntoFurtherPages() throws {
        let temp = TemporaryFolder("hf-summary")
        let path = temp.path + "/long.pdf"
        let sentences = (1...300).map { "Sentence number \($0) of a long review comment." }
        let records = [AnnotationRecord(page: 1, type: "Text", author: "Reviewer", text: sentences.joined(separator: " ")),
                       AnnotationRecord(page: 2, type: "Text", author: "Second", text: "After the long one")]
        let result = try writeSummary(records, to: path)
        XCTAssertGreaterThanOrEqual(result.pages, 2)
        try checkWithQPDF(path)
        let first = normalized(try pdftotext(path, pages: 1...1))
        let last = normalized(try pdftotext(path, pages: result.pages...result.pages))
        XCTAssertTrue(first.contains(normalized("Sentence number 1 of")), first)
        XCTAssertFalse(first.contains(normalized("Sentence number 300 of")))
        XCTAssertTrue(last.contains(normalized("Sentence number 300 of a long review comment.")), last)
        XCTAssertTrue(last.contains(normalized("After the long one")), last)
        let all = normalized(try pdftotext(path))
        for n in [1, 77, 150, 299, 300] {
            XCTAssertTrue(all.contains(normalized("Sentence number \(n) of")), "sentence \(n) lost")
        }

        // Paragraphs in the thousands and one enormous paragraph: laid out in
        // time, and nothing piles up on the last page.
        let manyLines = (1...3000).map { "line \($0)" }.joined(separator: "\n")
        let huge = String(repeating: "word ", count: 60_000)
        let start = Date()
        let big = try writeSummary([AnnotationRecord(page: 1, type: "Text", text: manyLines),
                                    AnnotationRecord(page: 1, type: "Text", text: huge + "THE-END")], to: temp.path + "/big.pdf")
        XCTAssertLessThan(Date().timeIntervalSince(start), 20)
        XCTAssertGreaterThan(big.pages, 40)
        let bigText = try pdftotext(temp.path + "/big.pdf", pages: big.pages...big.pages)
        XCTAssertTrue(normalized(bigText).contains("morecharactersnotshown)"), "the huge text is shortened:\n\(bigText.suffix(300))")
        XCTAssertTrue(try pdftotext(temp.path + "/big.pdf").contains("line 3000"))
    }

    func testNoAnnotationsStillGivesOnePage() throws {
        let temp = TemporaryFolder("hf-summary")
        let path = temp.path + "/empty.pdf"
        let result = try writeSummary([], title: "empty.pdf", to: path)
        XCTAssertEqual(result, SummaryResult(pages: 1, unshownCharacters: 0))
        XCTAssertTrue(try pdftotext(path).contains("No annotations on the selected pages"))
    }

    func testWriteFailureNamesTheOutputAndErrno() throws {
        let fd = open("/dev/full", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw XCTSkip("/dev/full is not available") }
        let output = FileDescriptor(adopting: fd, path: "/dev/full")
        do {
            _ = try SummaryPages.write(sampleRecords, title: "x", pageWidth: 595, pageHeight: 842, to: output)
            XCTFail("writing to a full device succeeded")
        } catch {
            XCTAssertEqual(error.kind, .system(errno: ENOSPC))
            XCTAssertTrue(error.description.contains("/dev/full"), error.description)
        }
    }

    func testSummariesFromSeveralThreadsAtOnce() throws {
        let temp = TemporaryFolder("hf-summary")
        let folder = temp.path
        let records = sampleRecords
        let outcomes = ConcurrentResults()
        DispatchQueue.concurrentPerform(iterations: 6) { k in
            let path = folder + "/parallel-\(k).pdf"
            do {
                let result = try writeSummary(records, to: path)
                outcomes.append(result.pages == 1 && result.unshownCharacters == 0 ? nil : "\(k): \(result)")
            } catch {
                outcomes.append("\(k): \(error)")
            }
        }
        XCTAssertEqual(outcomes.failures, [])
        XCTAssertEqual(outcomes.count, 6)
        let texts = try (0..<6).map { try pdftotext(temp.path + "/parallel-\($0).pdf") }
        XCTAssertEqual(Set(texts).count, 1, "every thread wrote the same summary")
    }

    // MARK: - appended to the output

    func testGenerateAppendsSummaryAfterSelectedPages() throws {
        let temp = TemporaryFolder("hf-summary")
        let input = TestPDF(pages: 3, title: "Vertrag", annotations: [0: [.square("s1"), .text("t1")], 2: [.freeText("f1"), .link("l1")]])
        let path = try input.write(to: temp.path + "/input.pdf")
        let document = try openPDF(path)
        let selected = [0, 2]
        let records = try document.annotations(pages: selected)
        XCTAssertEqual(records.map(\.page), [1, 1, 3])
        XCTAssertEqual(records.map(\.type), ["Square", "Text", "FreeText"])
        XCTAssertEqual(records.map(\.text), ["square s1", "comment t1", "Note f1"])
        let size = try document.pageSize(selected[0])

        let directory = try Directory(path: temp.path)
        let summaryPath = temp.path + "/summary.pdf"
        let summary = try SummaryPages.write(records, title: "Vertrag", pageWidth: size.width, pageHeight: size.height,
                                             to: try directory.createFile("summary.pdf"))
        let output = try directory.createFile("output.pdf")
        try document.generate(pages: selected, annotations: .flatten, title: nil, output: output,
                              append: try directory.openForReading("summary.pdf"))
        let outputPath = temp.path + "/output.pdf"

        try checkWithQPDF(outputPath)
        let pages = try runProcess(try XCTUnwrap(qpdfTool), ["--show-npages", outputPath])
        XCTAssertEqual(Int(pages.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), 2 + summary.pages)
        XCTAssertEqual(PDFBytes.pageMarkers(readBytes(outputPath)), [1, 3], "the selected pages come first")
        let last = try pdftotext(outputPath, pages: (2 + summary.pages)...(2 + summary.pages))
        XCTAssertTrue(normalized(last).contains(normalized("Annotations — Vertrag")), last)
        XCTAssertTrue(normalized(last).contains(normalized("Page 3 · Text box")), last)
        XCTAssertTrue(try pdftotext(outputPath, pages: 1...1).contains("Page 1"))
        XCTAssertEqual(try summarize(outputPath).annotations, 0, "flattened, and the summary pages carry none")
        XCTAssertEqual(try summarize(outputPath).title, "Vertrag")
        XCTAssertTrue(exists(summaryPath))
    }

    func testGenerateWithoutAppendIsUnchanged() throws {
        let temp = TemporaryFolder("hf-summary")
        let path = try TestPDF(pages: 2).write(to: temp.path + "/input.pdf")
        let directory = try Directory(path: temp.path)
        try openPDF(path).generate(pages: nil, annotations: .embed, title: nil, output: try directory.createFile("out.pdf"))
        XCTAssertEqual(try summarize(temp.path + "/out.pdf").pages, 2)
    }

    func testAppendingSomethingThatIsNotAPDFFails() throws {
        let temp = TemporaryFolder("hf-summary")
        let path = try TestPDF(pages: 2).write(to: temp.path + "/input.pdf")
        writeFile(temp.path + "/junk.pdf", "not a pdf")
        let directory = try Directory(path: temp.path)
        XCTAssertThrowsError(try openPDF(path).generate(pages: nil, annotations: .embed, title: nil,
                                                        output: try directory.createFile("out.pdf"),
                                                        append: try directory.openForReading("junk.pdf")))
    }

    // MARK: - display

    func testHeadingsAndDates() {
        XCTAssertEqual(SummaryPages.heading(AnnotationRecord(page: 3, type: "Highlight", author: "Jane Doe",
                                                             date: "2024-05-01T14:03:12+02:00")),
                       "Page 3 · Highlight · \u{2068}Jane Doe\u{2069} · 2024-05-01 14:03")
        XCTAssertEqual(SummaryPages.heading(AnnotationRecord(page: 1, type: "Text", subject: "Note", date: "2024-05-01")),
                       "Page 1 · Note · 2024-05-01", "a subject that repeats the type is not shown")
        XCTAssertEqual(SummaryPages.displayDate("Tuesday"), "Tuesday")
        XCTAssertEqual(SummaryPages.displayDate("2024-05-01T14:03"), "2024-05-01 14:03")
    }

    // MARK: - helpers

    private func pdftotext(_ path: String, pages: ClosedRange<Int>? = nil, layout: Bool = false) throws -> String {
        let tool = "/usr/bin/pdftotext"
        guard FileManager.default.isExecutableFile(atPath: tool) else { throw XCTSkip("pdftotext (poppler-utils) is not installed") }
        var arguments = ["-enc", "UTF-8"]
        if layout { arguments.append("-layout") }
        if let pages { arguments += ["-f", "\(pages.lowerBound)", "-l", "\(pages.upperBound)"] }
        let result = try runProcess(tool, arguments + [path, "-"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    private func checkWithQPDF(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        guard let qpdf = qpdfTool else { throw XCTSkip("the qpdf tool is not installed") }
        let result = try runProcess(qpdf, ["--check", path])
        XCTAssertEqual(result.status, 0, "qpdf --check \(path):\n\(result.stdout)\(result.stderr)", file: file, line: line)
    }

    /// pdftotext's word gaps are guesses from glyph positions (it splits
    /// Arabic and Hebrew words), and it marks right-to-left runs with
    /// embedding controls: compare text without either.
    private func normalized(_ s: String) -> String {
        let ignored: Set<UInt32> = [0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
        var scalars = String.UnicodeScalarView()
        for scalar in s.unicodeScalars where !scalar.properties.isWhitespace && !ignored.contains(scalar.value) {
            scalars.append(scalar)
        }
        return String(scalars)
    }
}

/// Writes a summary to a new file at path.
private func writeSummary(_ records: [AnnotationRecord], title: String = "test.pdf", to path: String,
                          width: Double = 595.28, height: Double = 841.89) throws -> SummaryResult {
    let url = URL(fileURLWithPath: path)
    let directory = try Directory(path: url.deletingLastPathComponent().path)
    let output = try directory.createFile(url.lastPathComponent)
    return try SummaryPages.write(records, title: title, pageWidth: width, pageHeight: height, to: output)
}

/// Results collected from concurrentPerform's threads.
private final class ConcurrentResults: Sendable {
    private let results = Mutex<[String?]>([])

    func append(_ failure: String?) { results.withLock { $0.append(failure) } }
    var failures: [String] { results.withLock { $0.compactMap { $0 } } }
    var count: Int { results.withLock { $0.count } }
}

