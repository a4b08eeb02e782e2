import Foundation
import XCTest
@testable import HotFolderKit

/// Every PDF of ../shared/corpus (real files other people wrote) through a
/// running service: each ends in done/ or failed/ exactly once, and the
/// service keeps running.
final class CorpusTests: XCTestCase {
    struct Entry {
        let name: String
        let pages: Int?
        let password: String
        let flattenPrint: String
        let annots: String
        let permissions: String

        /// What INDEX.tsv says: needs a password we do not have, or qpdf gives up,
        /// or its permissions forbid changing the annotations it has (flattening would).
        var expectedToFail: Bool { !password.isEmpty || pages == nil || flattenPrint.hasPrefix("rc=2") || annotationsLocked }
        var annotationsLocked: Bool { permissions.contains("modify-annotations") && !annots.hasPrefix("0") }
    }

    static func index(_ corpus: String) throws -> [Entry] {
        let text = try String(contentsOfFile: corpus + "/INDEX.tsv", encoding: .utf8)
        var lines = text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        let header = lines.removeFirst()
        func column(_ name: String) throws -> Int { try XCTUnwrap(header.firstIndex(of: name), "INDEX.tsv has no column \(name)") }
        let (file, pages, password, flatten, annots) = (try column("filename"), try column("pages"), try column("password"), try column("flatten_print"), try column("annots"))
        let permissions = try column("encryption/permissions")
        return lines.filter { $0.count > max(flatten, permissions) }.map {
            Entry(name: $0[file], pages: Int($0[pages]), password: $0[password], flattenPrint: $0[flatten], annots: $0[annots], permissions: $0[permissions])
        }
    }

    func dropWholeCorpus(into h: ServiceHarness, corpus: String) throws -> [Entry] {
        let entries = try Self.index(corpus)
        XCTAssertGreaterThan(entries.count, 30)
        for entry in entries {
            writeFile(h.drop + "/" + entry.name, readBytes(corpus + "/" + entry.name))
        }
        h.waitForOutcomes(entries.count, timeout: 120)
        h.waitUntilIdle()
        return entries
    }

    func checkOutcomes(_ h: ServiceHarness, _ entries: [Entry], file: StaticString = #filePath, line: UInt = #line) throws {
        let outcomes = h.recorder.outcomes
        XCTAssertEqual(outcomes.count, entries.count, "one outcome per file", file: file, line: line)
        let done = Set(files(in: h.done))
        let failed = Set(files(in: h.failed))
        for entry in entries {
            let mine = h.recorder.outcomes(for: entry.name)
            XCTAssertEqual(mine.count, 1, "\(entry.name) ended \(mine.count) times", file: file, line: line)
            let inDone = done.contains(entry.name)
            let inFailed = failed.contains(entry.name)
            XCTAssertTrue(inDone != inFailed, "\(entry.name) must be in exactly one of done/ and failed/", file: file, line: line)
            if inFailed {
                XCTAssertTrue(failed.contains(entry.name + ".error.txt"), "\(entry.name) has no error file", file: file, line: line)
                let text = h.errorText(for: entry.name)
                XCTAssertTrue(text.contains("What failed:") && text.contains("Why:"), text, file: file, line: line)
            }
            XCTAssertEqual(inFailed, entry.expectedToFail,
                           "\(entry.name): \(mine.first?.failure.map(\.description) ?? "succeeded")", file: file, line: line)
            if !entry.password.isEmpty {
                XCTAssertTrue(mine.first?.failure?.reason.contains("password") == true, "\(entry.name): \(String(describing: mine.first?.failure))", file: file, line: line)
            }
            if inDone {
                let export = h.out + "/" + entry.name
                let summary = try summarize(export)
                if let pages = entry.pages { XCTAssertEqual(summary.pages, pages, entry.name, file: file, line: line) }
                XCTAssertEqual(summary.annotations, 0, "\(entry.name): flatten leaves links only", file: file, line: line)
                XCTAssertFalse(summary.encrypted, "\(entry.name): exports are never encrypted", file: file, line: line)
                XCTAssertFalse(summary.hasForm, entry.name, file: file, line: line)
            }
        }
        XCTAssertEqual(files(in: h.drop), ["done", "failed"], "nothing left in the drop folder", file: file, line: line)
        XCTAssertEqual(jobFolders(of: h.drop), [], "nothing left in the service area", file: file, line: line)
    }

    func checkStillRunning(_ h: ServiceHarness, after count: Int, file: StaticString = #filePath, line: UInt = #line) {
        writeFile(h.drop + "/final-good.pdf", TestPDF(pages: 2).bytes)
        h.waitForOutcomes(count + 1)
        XCTAssertTrue(h.recorder.outcomes(for: "final-good.pdf").first?.succeeded == true, h.recorder.logText, file: file, line: line)
    }

    func testWholeCorpusThroughTheService() throws {
        let corpus = try Corpus.require()
        let h = try ServiceHarness("export.annotations = flatten\n")
        defer { h.stop() }
        h.start()
        let entries = try dropWholeCorpus(into: h, corpus: corpus)
        try checkOutcomes(h, entries)

        for recoverable in ["damaged--qpdf--xref-errors.pdf", "damaged--qpdf--append-xref-loop.pdf", "damaged--qpdf--xref-compressed-in-compressed.pdf"] {
            let outcome = h.recorder.outcomes(for: recoverable).first
            XCTAssertTrue(outcome?.succeeded == true, "\(recoverable): \(String(describing: outcome?.failure))")
            XCTAssertFalse(outcome?.warnings.isEmpty ?? true, "\(recoverable): the repair is reported")
        }
        // The document's own permissions are a feature source: no flattening where they forbid it.
        let locked = h.recorder.outcomes(for: "enc--qpdf--minimal-signed-restricted.pdf").first
        XCTAssertTrue(locked?.failure?.reason.contains("the PDF's permissions forbid changing them") == true, "\(String(describing: locked?.failure))")
        // Annotations without appearance streams are dropped by flattening: said, never silent.
        let pypdf = h.recorder.outcomes(for: "annot--pypdf--annotated_pdf.pdf").first
        XCTAssertTrue(pypdf?.warnings.contains { $0.contains("no appearance stream") } == true, "\(pypdf?.warnings ?? [])")
        // Links stay live on a screen copy.
        XCTAssertEqual(PDFBytes.count(readBytes(h.out + "/annot--qpdf--link-annots.pdf"), "/Link"), 16)
        checkStillRunning(h, after: entries.count)
    }

    /// The same through isolated worker processes (`hotfolder worker`), when
    /// the executable is built next to the tests.
    func testWholeCorpusThroughWorkerProcesses() throws {
        let corpus = try Corpus.require()
        let executable = try HotfolderExecutable.require()
        let h = try ServiceHarness("export.annotations = flatten-for-print\n", workerExecutable: executable)
        defer { h.stop() }
        h.start()
        let entries = try dropWholeCorpus(into: h, corpus: corpus)
        try checkOutcomes(h, entries)
        XCTAssertEqual(PDFBytes.count(readBytes(h.out + "/annot--qpdf--link-annots.pdf"), "/Link"), 0, "nothing live on paper")
        checkStillRunning(h, after: entries.count)
    }
}
