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

    /// A rescan while documents wait for a job thread finds them again in the
    /// folder: each stays queued once. (A second entry would claim whatever
    /// has the name by its turn, a new file still being written; here it would
    /// find the file gone, which the debug log says.)
    func testRescanWhileDocumentsAreQueuedQueuesEachOnce() throws {
        let h = try ServiceHarness(workers: 1)
        defer { h.stop() }
        h.start()
        let count = 30
        let staging = h.temp.sub("staging")
        // Big enough that the queue holds most of them for a while.
        let pdf = TestPDF(pages: 1500).bytes
        for i in 0..<count { writeFile(staging + "/q\(i).pdf", pdf) }
        for i in 0..<count { XCTAssertEqual(rename(staging + "/q\(i).pdf", h.drop + "/q\(i).pdf"), 0) }
        waitUntil(timeout: 60, "the first document") { h.recorder.outcomes.count >= 1 }
        let waiting = files(in: h.drop).filter { $0.hasSuffix(".pdf") }.count
        h.service.rescan(folder: "test")
        waitUntil(timeout: 120, "every document (have \(h.recorder.outcomes.count))") { h.recorder.outcomes.count >= count }
        XCTAssertGreaterThan(waiting, 5, "documents still waited when the rescan came (else this shows nothing)")
        XCTAssertEqual(h.recorder.outcomes.count, count)
        XCTAssertTrue(h.recorder.outcomes.allSatisfy(\.succeeded))
        XCTAssertFalse(h.recorder.logText.contains("vanished before it was claimed"), "queued twice:\n\(h.recorder.logText.suffix(2000))")
    }
}
