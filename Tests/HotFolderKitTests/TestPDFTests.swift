import Foundation
import XCTest
@testable import HotFolderKit

/// The test PDFs themselves: valid for qpdf and for the service's engine.
final class TestPDFTests: XCTestCase {
    static var samples: [(String, TestPDF)] {
        var annotated = TestPDF(pages: 3, title: "Grüße — 日本語")
        annotated.annotations = [
            0: [.square("sq1"), .freeText("ft1"), .text("tx1"), .link("ln1")],
            2: [.square("hidden", flags: [.print, .hidden]), .square("noview", flags: [.print, .noView]), .square("screen", flags: [])],
        ]
        return [
            ("plain", TestPDF(pages: 1)),
            ("five", TestPDF(pages: 5, title: "Plain (ASCII) title")),
            ("annotated", annotated),
            ("form", TestPDF(pages: 2, formFieldValue: "Hello form")),
        ]
    }

    func testSamplesPassQpdfCheck() throws {
        guard let qpdf = qpdfTool else { throw XCTSkip("qpdf is not installed") }
        let temp = TemporaryFolder("hf-testpdf")
        defer { withExtendedLifetime(temp) {} } // the folder goes only when the test ends
        for (name, pdf) in Self.samples {
            let path = try pdf.write(to: temp.path + "/\(name).pdf")
            let check = try runProcess(qpdf, ["--check", path])
            XCTAssertEqual(check.status, 0, "\(name): \(check.stdout)\(check.stderr)")
            XCTAssertTrue(check.stdout.contains("No syntax or stream encoding errors found"), "\(name): \(check.stdout)")
            XCTAssertFalse(check.stderr.contains("WARNING"), "\(name): \(check.stderr)")
        }
    }

    func testSamplesOpenInTheEngine() throws {
        let temp = TemporaryFolder("hf-testpdf")
        defer { withExtendedLifetime(temp) {} } // the folder goes only when the test ends
        let samples = Dictionary(uniqueKeysWithValues: Self.samples)
        for (name, pdf) in samples {
            try pdf.write(to: temp.path + "/\(name).pdf")
        }
        XCTAssertEqual(try summarize(temp.path + "/plain.pdf"), PDFSummary(pages: 1, annotations: 0, perPage: [0], title: nil, encrypted: false, hasForm: false))
        XCTAssertEqual(try summarize(temp.path + "/five.pdf").title, "Plain (ASCII) title")
        let annotated = try summarize(temp.path + "/annotated.pdf")
        XCTAssertEqual(annotated.pages, 3)
        XCTAssertEqual(annotated.perPage, [3, 0, 3], "links are not counted")
        XCTAssertEqual(annotated.title, "Grüße — 日本語")
        let form = try summarize(temp.path + "/form.pdf")
        XCTAssertTrue(form.hasForm)
        XCTAssertEqual(form.perPage, [1, 0])
        XCTAssertEqual(try openPDF(temp.path + "/form.pdf").info().needAppearances, true)
        XCTAssertEqual(PDFBytes.pageMarkers(readBytes(temp.path + "/five.pdf")), [1, 2, 3, 4, 5])
    }
}
