import Foundation
import Synchronization
import XCTest
@testable import HotFolderKit

/// A flood of files is processed in bounded memory: beyond a bound, documents
/// stay in the folder and are taken by a rescan once the queue drains.
final class FloodTests: XCTestCase {
    func testFloodIsProcessedWithABoundedQueue() throws {
        let temp = TemporaryFolder("hf-flood")
        let drop = temp.sub("drop")
        let staging = temp.sub("staging")
        let file = temp.path + "/hf.conf"
        try "[service]\ninstance = test\n[folder f]\npath = drop\nsettle = 0\nexport.to = out\n".write(toFile: file, atomically: true, encoding: .utf8)
        let recorder = Recorder()
        let service = HotFolderService(configuration: try ServiceConfiguration.load(file: file), delegate: recorder, logToStandardError: false)
        service.maxQueuedDocuments = 25
        service.start()
        defer { service.stop() }
        let count = 1_500
        let pdf = readBytes(try TestPDF(pages: 1).write(to: temp.path + "/one.pdf"))
        for i in 0..<count { writeFile(staging + "/f\(i).pdf", pdf) }
        let highest = Mutex(0)
        let watching = Mutex(true)
        let sampler = Thread {
            while watching.withLock({ $0 }) {
                let n = service.pendingJobs
                highest.withLock { $0 = max($0, n) }
                usleep(1_000)
            }
        }
        sampler.start()
        for i in 0..<count { XCTAssertEqual(rename(staging + "/f\(i).pdf", drop + "/f\(i).pdf"), 0) }
        waitUntil(timeout: 120, "every document (have \(recorder.outcomes.count))") { recorder.outcomes.count >= count }
        watching.withLock { $0 = false }
        XCTAssertEqual(recorder.outcomes.count, count, "each exactly once")
        XCTAssertEqual(Set(recorder.outcomes.map(\.original)).count, count)
        XCTAssertTrue(recorder.outcomes.allSatisfy(\.succeeded))
        XCTAssertEqual(files(in: temp.path + "/out").count, count)
        XCTAssertLessThanOrEqual(highest.withLock { $0 }, 25 + 1, "the queue stayed bounded")
        XCTAssertTrue(recorder.logText.contains("stay in the folder until the queue drains"))
    }
}
