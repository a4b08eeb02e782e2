import Foundation
import Synchronization
import XCTest
@testable import HotFolderKit

/// The group commit's gathering: a sync waits for work under way, never for
/// nothing, and never past a full batch. Windows far longer than the tests'
/// deadlines make "waited for the window" fail instead of pass slowly.
final class SyncBatcherTests: XCTestCase {
    private func folder() throws -> Directory {
        let path = NSTemporaryDirectory() + "hf-sync-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return try Directory(path: path)
    }

    func testALoneRequestIsSyncedAtOnce() throws {
        let batcher = SyncBatcher(gatherWindow: 600, othersWorking: { false })
        let synced = expectation(description: "synced")
        batcher.afterSync([try folder()]) { failure in
            XCTAssertNil(failure)
            synced.fulfill()
        }
        wait(for: [synced], timeout: 60)
        XCTAssertEqual(batcher.syncsStarted, 1)
    }

    func testOneSyncServesWhatArrivesWhileOthersWork() throws {
        let working = Mutex(true)
        let batcher = SyncBatcher(gatherWindow: 600, othersWorking: { working.withLock { $0 } })
        let dir = try folder()
        let served = Mutex<[Int]>([])
        let all = expectation(description: "all synced")
        all.expectedFulfillmentCount = 3
        for i in 0..<3 {
            batcher.afterSync([dir]) { failure in
                XCTAssertNil(failure)
                served.withLock { $0.append(i) }
                all.fulfill()
            }
        }
        // Nothing is synced while the others work (the window is ten minutes).
        XCTAssertEqual(batcher.syncsStarted, 0)
        XCTAssertTrue(served.withLock { $0.isEmpty })
        working.withLock { $0 = false }
        wait(for: [all], timeout: 60)
        XCTAssertEqual(batcher.syncsStarted, 1, "one sync for the three requests")
        XCTAssertEqual(served.withLock { $0.sorted() }, [0, 1, 2])
    }

    func testAFullBatchGoesWithoutWaitingForTheOthers() throws {
        let batcher = SyncBatcher(gatherWindow: 600, othersWorking: { true })
        let dir = try folder()
        let all = expectation(description: "all synced")
        all.expectedFulfillmentCount = 256
        for _ in 0..<256 { batcher.afterSync([dir]) { _ in all.fulfill() } }
        wait(for: [all], timeout: 60)
        XCTAssertLessThanOrEqual(batcher.syncsStarted, 2)
    }
}
