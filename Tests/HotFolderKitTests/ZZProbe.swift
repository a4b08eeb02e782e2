import Foundation
import XCTest
@testable import HotFolderKit

final class ZZProbe: XCTestCase {
    func testRecursiveSettle0() throws {
        for round in 0..<10 {
            let h = try ServiceHarness("recursive = yes\n", settle: "0")
            h.start()
            let sub = h.drop + "/incoming"
            XCTAssertEqual(mkdir(sub, 0o755), 0)
            var big = TestPDF(pages: 200)
            big.trailerComment = "x"
            let bytes = big.bytes
            for n in 0..<50 { writeFile(sub + "/sub-\(n).pdf", bytes) }
            h.waitForOutcomes(50)
            h.waitUntilIdle()
            XCTAssertEqual(h.recorder.succeeded.count, 50, "round \(round): " + h.recorder.failed.map { "\($0.original): \(String(describing: $0.failure))" }.joined(separator: "\n"))
            h.stop()
        }
    }
}
