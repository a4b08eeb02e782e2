import Foundation
import XCTest
@testable import HotFolderKit

/// Option sets: a category lists the allowed options; the document decides
/// which applies (seed 000's defaults).
final class OptionTests: XCTestCase {
    func run(_ bytes: [UInt8], name: String, lines: String) throws -> (Recorder, TemporaryFolder) {
        let temp = TemporaryFolder("hf-options")
        _ = temp.sub("drop")
        let file = temp.path + "/hf.conf"
        try ("[service]\ninstance = test\n[folder f]\npath = drop\nsettle = 0\nexport.to = out\n" + lines).write(toFile: file, atomically: true, encoding: .utf8)
        let recorder = Recorder()
        let service = HotFolderService(configuration: try ServiceConfiguration.load(file: file), delegate: recorder, logToStandardError: false)
        service.start()
        defer { service.stop() }
        writeFile(temp.path + "/drop/" + name, bytes)
        waitUntil(timeout: 30, "the outcome") { recorder.outcomes.count == 1 }
        return (recorder, temp)
    }

    func testANonPDFGoesAsItsOriginalWhereOriginalIsAllowed() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 1, count: 64)
        let (recorder, root) = try run(png, name: "scan.png", lines: "export.format = pdf, original\n")
        XCTAssertEqual(recorder.outcomes.first?.succeeded, true, "\(recorder.outcomes)")
        XCTAssertEqual(readBytes(root.path + "/out/scan.png"), png)
    }

    func testANonPDFFailsWhereOnlyPDFIsAllowed() throws {
        let (recorder, _) = try run(Array("just text\n".utf8), name: "note.pdf", lines: "export.format = pdf\n")
        let failure = try XCTUnwrap(recorder.outcomes.first?.failure)
        XCTAssertTrue(failure.reason.contains("plain text"), failure.reason)
    }

    func testAnEmptyFileFailsEvenWhereOriginalIsAllowed() throws {
        let (recorder, _) = try run([], name: "empty.pdf", lines: "export.format = original\n")
        XCTAssertTrue(recorder.outcomes.first?.failure?.reason.contains("empty") == true)
    }
}
