import Foundation
import XCTest
@testable import HotFolderKit

final class NamingTests: XCTestCase {
    func render(_ template: String, _ values: [NameTemplate.Placeholder: String]) throws -> String {
        try NameTemplate(parsing: template).render(values)
    }

    func templateError(_ template: String) -> String? {
        do {
            _ = try NameTemplate(parsing: template)
            return nil
        } catch {
            return error.text
        }
    }

    // MARK: - templates

    func testPlaceholders() throws {
        let values: [NameTemplate.Placeholder: String] = [.stem: "scan 12", .ext: "pdf", .title: "Quarterly", .folder: "front-desk", .date: "2024-02-29", .time: "13-05-09"]
        XCTAssertEqual(try render("{stem}", values), "scan 12")
        XCTAssertEqual(try render("{stem}.{ext}", values), "scan 12.pdf")
        XCTAssertEqual(try render("{title|stem}", values), "Quarterly")
        XCTAssertEqual(try render("{folder}/{date} {time}", values), "front-desk/2024-02-29 13-05-09")
        XCTAssertEqual(try render("{ stem }-{ title | stem }", values), "scan 12-Quarterly", "spaces inside braces are allowed")
        XCTAssertEqual(try render("plain", values), "plain")
        XCTAssertEqual(try render("", values), "")
    }

    func testAlternativesFallBack() throws {
        XCTAssertEqual(try render("{title|stem}", [.stem: "scan", .title: ""]), "scan")
        XCTAssertEqual(try render("{title|stem}", [.stem: "scan"]), "scan")
        XCTAssertEqual(try render("{title|folder|stem}", [.stem: "scan", .folder: "inbox"]), "inbox")
        XCTAssertEqual(try render("[{title}]", [.stem: "scan"]), "[]", "no value, no alternative: empty")
    }

    func testUses() throws {
        XCTAssertTrue(try NameTemplate(parsing: "{date} {title|stem}").uses(.title))
        XCTAssertTrue(try NameTemplate(parsing: "{date} {title|stem}").uses(.stem))
        XCTAssertFalse(try NameTemplate(parsing: "{date} {title|stem}").uses(.folder))
    }

    func testBadTemplates() {
        let unknown = templateError("{stem}-{nope}.pdf")
        XCTAssertTrue(unknown?.contains("unknown placeholder {nope}") == true, unknown ?? "accepted")
        XCTAssertTrue(unknown?.contains("{stem}, {ext}, {title}, {folder}, {date}, {time}") == true, unknown ?? "")
        XCTAssertTrue(templateError("{titel}")?.contains("did you mean \"title\"?") == true)
        XCTAssertTrue(templateError("{stem")?.contains("unclosed {") == true)
        XCTAssertTrue(templateError("stem}")?.contains("unmatched }") == true)
        XCTAssertNotNil(templateError("{}"))
        XCTAssertNotNil(templateError("{title|}"))
    }

    func testTemplateValuesOfAJob() throws {
        let run = try PipelineRun(TestPDF(pages: 1, title: "The Title"), name: "my scan.PDF")
        let pipeline = Pipeline(folder: run.folder, job: run.job, now: Date(timeIntervalSince1970: 1_700_000_000))
        let values = pipeline.templateValues(try run.result().facts)
        XCTAssertEqual(values[.stem], "my scan")
        XCTAssertEqual(values[.ext], "PDF")
        XCTAssertEqual(values[.title], "The Title")
        XCTAssertEqual(values[.folder], "test")
        let date = try XCTUnwrap(values[.date])
        XCTAssertNotNil(date.wholeMatch(of: /\d{4}-\d{2}-\d{2}/), date)
        XCTAssertNotNil(values[.time]?.wholeMatch(of: /\d{2}-\d{2}-\d{2}/))

        let untitled = try PipelineRun(TestPDF(pages: 1), name: "scan.pdf")
        XCTAssertEqual(Pipeline(folder: untitled.folder, job: untitled.job).templateValues(try untitled.result().facts)[.title], "scan", "no title: the stem")
    }

    // MARK: - sanitizing

    func testPathTraversal() {
        let name = FileNameSanitizer.sanitize("../../etc/passwd")
        XCTAssertFalse(name.contains("/"), name)
        XCTAssertFalse(name.hasPrefix("."), name)
        XCTAssertEqual(name, "_.._etc_passwd")
        XCTAssertEqual(FileNameSanitizer.sanitize("a\\b/c"), "a_b_c")
        XCTAssertEqual(FileNameSanitizer.sanitize(".."), "document")
        XCTAssertEqual(FileNameSanitizer.sanitize("."), "document")
        XCTAssertEqual(FileNameSanitizer.fileName(rendered: "../../etc/passwd", ext: "pdf"), "_.._etc_passwd.pdf")
    }

    func testControlCharacters() {
        XCTAssertEqual(FileNameSanitizer.sanitize("a\u{0}b"), "a b")
        XCTAssertEqual(FileNameSanitizer.sanitize("line1\nline2\r\tend\u{7F}\u{85}x"), "line1 line2 end x")
        XCTAssertEqual(FileNameSanitizer.sanitize("\u{1B}[31mred"), "[31mred")
        for scalar in FileNameSanitizer.sanitize("a\u{0}\u{1}\u{1F}\u{7F}\u{9F}z").unicodeScalars {
            XCTAssertFalse(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value), "control U+\(String(scalar.value, radix: 16)) left")
        }
    }

    func testBidirectionalOverridesAreRemoved() {
        // "invoice<RLO>fdp.exe" displays as "invoiceexe.pdf".
        XCTAssertEqual(FileNameSanitizer.sanitize("invoice\u{202E}fdp.exe"), "invoicefdp.exe")
        XCTAssertEqual(FileNameSanitizer.sanitize("a\u{200E}b\u{200F}c\u{2066}d\u{2069}e\u{FEFF}f"), "abcdef")
        XCTAssertFalse(FileNameSanitizer.fileName(rendered: "x\u{202E}fdp.exe", ext: "pdf").unicodeScalars.contains("\u{202E}"))
    }

    func testLeadingDotsAndTrailingDotsAndSpaces() {
        XCTAssertEqual(FileNameSanitizer.sanitize("...hidden"), "hidden")
        XCTAssertEqual(FileNameSanitizer.sanitize(" . .name. . "), "name")
        XCTAssertEqual(FileNameSanitizer.sanitize("many     spaces"), "many spaces")
        XCTAssertEqual(FileNameSanitizer.sanitize(""), "document")
        XCTAssertEqual(FileNameSanitizer.sanitize("   "), "document")
        XCTAssertEqual(FileNameSanitizer.sanitize("", fallback: "x"), "x")
        XCTAssertEqual(FileNameSanitizer.fileName(rendered: ".pdf", ext: "pdf"), "document.pdf")
        XCTAssertEqual(FileNameSanitizer.fileName(rendered: ".bashrc", ext: "pdf"), "bashrc.pdf")
    }

    func testUnicodeIsKept() {
        XCTAssertEqual(FileNameSanitizer.sanitize("Grüße — 日本語 ✓"), "Grüße — 日本語 ✓")
        XCTAssertEqual(FileNameSanitizer.fileName(rendered: "Grüße — 日本語", ext: "pdf"), "Grüße — 日本語.pdf")
    }

    func testLongTitlesAreBounded() {
        for unit in ["a", "ä", "日", "👩‍👩‍👧"] {
            let title = String(repeating: unit, count: 10_000)
            let base = FileNameSanitizer.sanitize(title)
            XCTAssertLessThanOrEqual(base.utf8.count, FileNameSanitizer.maxBaseBytes, unit)
            XCTAssertGreaterThan(base.utf8.count, FileNameSanitizer.maxBaseBytes - 30, unit)
            XCTAssertTrue(title.hasPrefix(base), "cut at a character boundary: \(unit)")
            let name = FileNameSanitizer.fileName(rendered: title + ".pdf", ext: "pdf")
            XCTAssertLessThanOrEqual(name.utf8.count, 255, unit)
            XCTAssertTrue(name.hasSuffix(".pdf"), unit)
            XCTAssertLessThanOrEqual(FileNameSanitizer.numbered(name, 9999).utf8.count, 255, unit)
            XCTAssertLessThanOrEqual(FileNameSanitizer.numbered(name, 10_000).utf8.count, 255, unit)
        }
    }

    func testExtensionIsNotDoubled() {
        XCTAssertEqual(FileNameSanitizer.fileName(rendered: "report", ext: "pdf"), "report.pdf")
        XCTAssertEqual(FileNameSanitizer.fileName(rendered: "report.pdf", ext: "pdf"), "report.pdf")
        XCTAssertEqual(FileNameSanitizer.fileName(rendered: "report.PDF", ext: "pdf"), "report.pdf")
        XCTAssertEqual(FileNameSanitizer.fileName(rendered: "report.pdf.pdf", ext: "pdf"), "report.pdf", "{title}.pdf with a title that ends in .pdf")
        XCTAssertEqual(FileNameSanitizer.fileName(rendered: "report", ext: ""), "report")
        XCTAssertEqual(FileNameSanitizer.fileName(rendered: "v1.2 final", ext: "pdf"), "v1.2 final.pdf")
        XCTAssertEqual(FileNameSanitizer.fileName(rendered: "photo", ext: "jp/g"), "photo.jp_g")
    }

    func testNumbering() {
        XCTAssertEqual(FileNameSanitizer.numbered("name.pdf", 2), "name (2).pdf")
        XCTAssertEqual(FileNameSanitizer.numbered("name.pdf", 10), "name (10).pdf")
        XCTAssertEqual(FileNameSanitizer.numbered("README", 3), "README (3)")
        XCTAssertEqual(FileNameSanitizer.numbered(".profile", 2), ".profile (2)")
        XCTAssertEqual(FileNameSanitizer.numbered("my file.v2.pdf", 2), "my file.v2 (2).pdf")
    }

    func testSplit() {
        XCTAssertTrue(FileNameSanitizer.split("a.pdf") == ("a", "pdf"))
        XCTAssertTrue(FileNameSanitizer.split("archive.tar.gz") == ("archive.tar", "gz"))
        XCTAssertTrue(FileNameSanitizer.split(".bashrc") == (".bashrc", ""))
        XCTAssertTrue(FileNameSanitizer.split("noext") == ("noext", ""))
        XCTAssertTrue(FileNameSanitizer.split("trailing.") == ("trailing.", ""))
        XCTAssertTrue(FileNameSanitizer.split("Mr. Smith letter") == ("Mr. Smith letter", ""))
        XCTAssertTrue(FileNameSanitizer.split("x.averyveryverylongextension") == ("x.averyveryverylongextension", ""))
    }

    func testCleanTitle() {
        XCTAssertEqual(FileNameSanitizer.cleanTitle("  a\u{0}b\nc\u{7F}  "), "abc")
        XCTAssertEqual(FileNameSanitizer.cleanTitle("Grüße — 日本語"), "Grüße — 日本語")
    }

    func testSpelling() {
        XCTAssertEqual(Spelling.distance("settle", "settle"), 0)
        XCTAssertEqual(Spelling.distance("setle", "settle"), 1)
        XCTAssertEqual(Spelling.distance("", "abc"), 3)
        XCTAssertEqual(Spelling.distance("kitten", "sitting"), 3)
        XCTAssertEqual(Spelling.suggestion(for: "setle", among: ["path", "settle"]), "; did you mean \"settle\"?")
        XCTAssertEqual(Spelling.suggestion(for: "SETTLE", among: ["settle"]), "; did you mean \"settle\"?")
        XCTAssertEqual(Spelling.suggestion(for: "xyzzy", among: ["path", "settle"]), "")
        XCTAssertEqual(Spelling.suggestion(for: "x", among: []), "")
    }
}
