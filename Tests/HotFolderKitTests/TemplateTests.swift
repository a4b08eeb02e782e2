import Foundation
import XCTest
@testable import HotFolderKit

/// The naming hooks that need a running service: {pages}, and {n}, a per-folder
/// counter that is not reused after a restart.
final class TemplateTests: XCTestCase {
    func testPagesAndCounterInNames() throws {
        let temp = TemporaryFolder("hf-names")
        _ = temp.sub("drop")
        let file = temp.path + "/hf.conf"
        try "[service]\ninstance = test\n[folder f]\npath = drop\nsettle = 0\nexport.to = out\nexport.name = {n} {stem} ({pages} pages)\nexport.title = No. {n}\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let config = try ServiceConfiguration.load(file: file)
        var recorder = Recorder()
        var service = HotFolderService(configuration: config, delegate: recorder, logToStandardError: false)
        service.start()
        try TestPDF(pages: 3).write(to: temp.path + "/drop/a.pdf")
        waitUntil(timeout: 30, "the first export") { recorder.outcomes.count == 1 }
        try TestPDF(pages: 1).write(to: temp.path + "/drop/b.pdf")
        waitUntil(timeout: 30, "the second export") { recorder.outcomes.count == 2 }
        service.stop()
        XCTAssertEqual(files(in: temp.path + "/out"), ["1 a (3 pages).pdf", "2 b (1 pages).pdf"])
        XCTAssertEqual(try openPDF(temp.path + "/out/2 b (1 pages).pdf").title(), "No. 2")

        recorder = Recorder()
        service = HotFolderService(configuration: config, delegate: recorder, logToStandardError: false)
        service.start()
        defer { service.stop() }
        try TestPDF(pages: 2).write(to: temp.path + "/drop/c.pdf")
        waitUntil(timeout: 30, "the export after the restart") { recorder.outcomes.count == 1 }
        XCTAssertTrue(files(in: temp.path + "/out").contains("3 c (2 pages).pdf"), "the counter goes on after a restart: \(files(in: temp.path + "/out"))")
    }
}
