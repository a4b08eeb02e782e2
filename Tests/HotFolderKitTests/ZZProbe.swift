import Foundation
import XCTest
@testable import HotFolderKit

final class ZZProbe: XCTestCase {
    func testRecursiveSettle0PausingWriter() throws {
        for settle in ["0", "100ms"] {
            let h = try ServiceHarness("recursive = yes\n", settle: settle)
            h.start()
            let sub = h.drop + "/incoming"
            XCTAssertEqual(mkdir(sub, 0o755), 0)
            let bytes = TestPDF(pages: 3).bytes
            let fd = open(sub + "/f.pdf", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, 100) }
            usleep(50_000)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + 100, bytes.count - 100) }
            close(fd)
            h.waitForOutcomes(1)
            h.waitUntilIdle()
            print("settle \(settle): ", h.recorder.outcomes.map { "\($0.original): \(String(describing: $0.failure))" })
            h.stop()
        }
    }
}
