import Foundation
import Glibc
import XCTest
@testable import HotFolderKit

/// Hostile input dropped into a running `hotfolder run` (worker processes):
/// damaged, truncated, bit-flipped and crafted PDFs, and hostile file names.
/// The service never dies, and every file ends in done/ or in failed/ with an
/// error file; none is left behind.
final class HostileInputTests: XCTestCase {
    /// Every file of the shared corpus (damaged, encrypted, forms, a PDF that
    /// crashes qpdf) plus seeded mutations of three of them.
    func testEveryCorpusFileAndItsMutationsEndInDoneOrFailed() throws {
        let corpus = try Corpus.require()
        var rng = RLRandom.forTest("hostile-corpus")
        var inputs: [(name: String, bytes: [UInt8])] = []
        for name in files(in: corpus) where name.hasSuffix(".pdf") {
            inputs.append((name, readBytes(corpus + "/" + name)))
        }
        XCTAssertGreaterThan(inputs.count, 20, "the corpus holds its PDFs")
        for base in ["annot--qpdf--form-filled-by-acrobat.pdf", "struct--qpdf--object-stream.pdf", "struct--qpdf--hybrid-xref.pdf"] {
            guard let bytes = inputs.first(where: { $0.name == base })?.bytes else { continue }
            inputs += rlMutations(of: bytes, stem: "mut-" + String(base.dropLast(4)), rng: &rng)
        }
        try runHostile("corpus", inputs)
    }

    /// Truncations at 10 offsets and 20 random byte-flip variants of each of
    /// three valid generated PDFs (annotations, a form, many pages).
    func testTruncatedAndBitFlippedPDFsNeverKillTheService() throws {
        var rng = RLRandom.forTest("hostile-mutations")
        var annotated = TestPDF(pages: 3, title: "annotated", annotations: [0: [.square("a"), .freeText("b")], 1: [.text("c"), .link("d")]])
        annotated.trailerComment = "annotated"
        let form = TestPDF(pages: 1, title: "form", formFieldValue: "value")
        let long = TestPDF(pages: 25, title: "long")
        var inputs: [(name: String, bytes: [UInt8])] = []
        for (stem, pdf) in [("annotated", annotated), ("form", form), ("long", long)] {
            inputs.append((stem + ".pdf", pdf.bytes))
            inputs += rlMutations(of: pdf.bytes, stem: stem, rng: &rng)
        }
        try runHostile("mutations", inputs)
    }

    /// File names that break naive code: control characters, quotes, shell
    /// syntax, format strings, leading dashes, decomposed Unicode, 240-byte
    /// names, a name that looks like a collision copy. Each is processed, kept
    /// under its exact name in done/, and exported under a safe name.
    func testHostileFileNamesAreProcessedAndKept() throws {
        let names = [
            "line\nbreak.pdf", "tab\there.pdf", "back\\slash.pdf", "quote\"s 'and' `ticks`.pdf", "-leading-dash.pdf",
            "%s%n%x%d.pdf", "$(touch pwned).pdf", ";rm -rf ~;.pdf", "ünïcödé – 日本語.pdf", "Cafe\u{301} décomposé.pdf",
            "trailing space .pdf", "no-extension", "UPPER.PDF", "many.dots.in.name.pdf", "a (2).pdf",
            String(repeating: "é", count: 118) + ".pdf", "emoji 📄🔥.pdf", "carriage\rreturn.pdf",
        ]
        let service = try RLService("hostile-names", config: rlConfig(folder: ["export.to": "out", "export.name": "{stem}"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        for (i, name) in names.enumerated() { f.drop(name, rlPDF(title: "hostile \(i)")) }
        waitUntil(timeout: 60, "every hostile name") { (f.finishedCount >= names.count && f.leftInDrop.isEmpty) || !service.isRunning }
        XCTAssertTrue(service.isRunning)
        XCTAssertEqual(f.failedNames, [], f.errorReport())
        XCTAssertEqual(Set(f.doneNames), Set(names), "each original kept under its exact name")
        let exports = files(in: f.out)
        XCTAssertEqual(exports.count, names.count, "one export each: \(exports)")
        for export in exports {
            XCTAssertFalse(export.contains("/") || export.unicodeScalars.contains { $0.value < 0x20 }, "unsafe export name \(export.debugDescription)")
            XCTAssertLessThanOrEqual(export.utf8.count, 255, export)
        }
        XCTAssertFalse(exists(service.root.path + "/pwned") || exists(f.drop + "/pwned"), "no shell ever ran a name")
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    /// A file name that is not valid UTF-8 (Latin-1 "Café.pdf" from an old
    /// SMB client or a tar archive): it must not lie in the drop folder for
    /// ever without a word; it ends in done/ or failed/ like any other file.
    func testNonUTF8FileNameIsNotLeftBehindSilently() throws {
        let service = try RLService("latin1-name", config: rlConfig(folder: ["export.to": "out"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        let latin1: [UInt8] = Array("Caf".utf8) + [0xE9] + Array(".pdf".utf8)
        let bytes = rlPDF(title: "latin1")
        let path = Array(f.drop.utf8) + [UInt8(ascii: "/")] + latin1 + [0]
        let fd = path.withUnsafeBufferPointer { p in
            p.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        }
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, bytes.count)
        close(fd)
        f.drop("plain.pdf", rlPDF(title: "plain"))
        waitUntil(timeout: 10, "both files to leave the drop folder") { (f.finishedCount >= 2 && f.leftInDrop.isEmpty) || !service.isRunning }
        XCTAssertEqual(f.leftInDrop.count, 0, "left in the drop folder without a word: \(f.leftInDrop.map(\.debugDescription))\n\(service.currentLog.suffix(1500))")
        XCTAssertEqual(f.finishedCount, 2, "done: \(f.doneNames), failed: \(f.failedNames)")
        XCTAssertEqual(service.terminate().exit, .exited(0))
    }

    // MARK: - running

    private func runHostile(_ label: String, _ inputs: [(name: String, bytes: [UInt8])], file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(Set(inputs.map(\.name)).count, inputs.count, "unique names", file: file, line: line)
        let service = try RLService("hostile-\(label)", config: rlConfig(
            service: ["job-timeout": "30s"], folder: ["export.to": "out", "export.name": "{stem}", "export.annotations": "flatten"]))
        let f = RLFolders(root: service.root.path)
        try service.start()
        service.waitUntilWatching()
        let began = Date()
        for input in inputs { f.drop(input.name, input.bytes) }
        waitUntil(timeout: 150, "every hostile file to end in done/ or failed/", file: file, line: line) {
            (f.finishedCount >= inputs.count && f.allJobFolders.isEmpty && f.leftInDrop.isEmpty) || !service.isRunning
        }
        XCTAssertTrue(service.isRunning, "the service died (\(service.process?.exit?.description ?? "")):\n\(service.currentLog.suffix(4000))", file: file, line: line)
        let done = f.doneNames
        let failed = f.failedNames
        XCTAssertEqual(Set(done + failed), Set(inputs.map(\.name)), "every file ends in done/ or failed/", file: file, line: line)
        XCTAssertEqual(done.count + failed.count, inputs.count, "each once", file: file, line: line)
        XCTAssertEqual(f.leftInDrop, [], file: file, line: line)
        XCTAssertEqual(f.allJobFolders, [], file: file, line: line)
        var reasons: [String: Int] = [:]
        for name in failed {
            let text = readText(f.failed + "/" + name + ".error.txt")
            XCTAssertTrue(text.contains("What failed: ") && text.contains("Why: "), "\(name) has no error file", file: file, line: line)
            let why = text.split(separator: "\n").first { $0.hasPrefix("What failed: ") }.map { String($0.dropFirst(13)) } ?? "?"
            reasons[why, default: 0] += 1
            XCTAssertFalse(text.contains("the worker process failed"), "\(name): an engine problem is blamed on the worker:\n\(text)", file: file, line: line)
        }
        let exports = files(in: f.out)
        XCTAssertEqual(exports.count, done.count, "one export per processed file", file: file, line: line)
        if let qpdf = qpdfTool {
            for export in exports {
                let check = try runProcess(qpdf, ["--check", f.out + "/" + export])
                XCTAssertTrue(check.status == 0 || check.status == 3, "\(export) is not a readable PDF: \(check.stdout.suffix(300))", file: file, line: line)
            }
        }
        XCTAssertLessThanOrEqual(service.workers.count, 2, "no worker accumulates", file: file, line: line)
        print("[hostile-\(label)] \(inputs.count) files in \(String(format: "%.1f", Date().timeIntervalSince(began))) s: \(done.count) done, \(failed.count) failed \(reasons.sorted { $0.key < $1.key })")
        XCTAssertEqual(service.terminate().exit, .exited(0), file: file, line: line)
    }
}

/// Ten truncations at seeded offsets and twenty variants with 1-8 random
/// bytes replaced each.
func rlMutations(of bytes: [UInt8], stem: String, rng: inout RLRandom) -> [(name: String, bytes: [UInt8])] {
    var result: [(name: String, bytes: [UInt8])] = []
    var offsets = Set<Int>()
    while offsets.count < min(10, bytes.count - 1) { offsets.insert(Int.random(in: 1..<bytes.count, using: &rng)) }
    for offset in offsets.sorted() { result.append(("\(stem)-cut-\(offset).pdf", Array(bytes.prefix(offset)))) }
    for k in 1...20 {
        var mutated = bytes
        for _ in 0..<Int.random(in: 1...8, using: &rng) {
            mutated[Int.random(in: 0..<mutated.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
        }
        result.append(("\(stem)-flip-\(k).pdf", mutated))
    }
    return result
}
