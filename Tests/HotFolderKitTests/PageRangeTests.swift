import XCTest
@testable import HotFolderKit

final class PageRangeTests: XCTestCase {
    func ranges(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [PageRange]? {
        switch PageSelection.parseRanges(text) {
        case .success(let r): return r
        case .failure: return nil
        }
    }

    func list(_ text: String) -> Result<[PageSelection], ConfigurationMessage> { PageSelection.parseList(text) }

    func testParseRanges() {
        XCTAssertEqual(ranges("1-3,5,8-"), [PageRange(lower: 1, upper: 3), PageRange(lower: 5, upper: 5), PageRange(lower: 8, upper: nil)])
        XCTAssertEqual(ranges(" 2 - 4 , 7 "), [PageRange(lower: 2, upper: 4), PageRange(lower: 7, upper: 7)])
        XCTAssertEqual(ranges("3-3"), [PageRange(lower: 3, upper: 3)])
        XCTAssertEqual(ranges("1-"), [PageRange(lower: 1, upper: nil)])
        XCTAssertEqual(ranges("1-3,5,8-").map { $0.map(\.description).joined(separator: ",") }, "1-3,5,8-")
    }

    func testBadRanges() {
        for bad in ["", "0", "0-3", "3-1", "-3", "a", "1,,2", "1-2-3", "1-x", "1.5", ",1", "1,"] {
            XCTAssertNil(ranges(bad), "\"\(bad)\" must be rejected")
        }
        guard case .failure(let m) = PageSelection.parseRanges("0-3") else { return XCTFail() }
        XCTAssertTrue(m.text.contains("numbered from 1"), m.text)
        guard case .failure(let m2) = PageSelection.parseRanges("5-2") else { return XCTFail() }
        XCTAssertTrue(m2.text.contains("not below the start"), m2.text)
    }

    func testParseList() {
        XCTAssertEqual(try list("all").get(), [.all])
        XCTAssertEqual(try list("ALL").get(), [.all])
        XCTAssertEqual(try list("first, 1-3,5").get(), [.first, .ranges([PageRange(lower: 1, upper: 3), PageRange(lower: 5, upper: 5)])])
        XCTAssertEqual(try list("1-3,5, first").get(), [.ranges([PageRange(lower: 1, upper: 3), PageRange(lower: 5, upper: 5)]), .first])
        XCTAssertEqual(try list("1-2, last, 4-").get(), [.ranges([PageRange(lower: 1, upper: 2)]), .last, .ranges([PageRange(lower: 4, upper: nil)])])
        XCTAssertEqual(try list("annotated, all").get(), [.annotated, .all])
        XCTAssertEqual(try list("last,first").get(), [.last, .first])
    }

    func testBadLists() {
        for bad in ["", "   ", "odd", "first, 0-2", "1-3, evens", "first, 3-1", "firsts"] {
            guard case .failure(let m) = list(bad) else {
                XCTFail("\"\(bad)\" must be rejected")
                continue
            }
            XCTAssertFalse(m.text.isEmpty)
        }
        guard case .failure(let m) = list("odd") else { return XCTFail() }
        XCTAssertTrue(m.text.contains("unknown page selection \"odd\""), m.text)
    }

    func testDescriptions() {
        XCTAssertEqual(PageSelection.all.description, "all")
        XCTAssertEqual(PageSelection.first.description, "first")
        XCTAssertEqual(PageSelection.last.description, "last")
        XCTAssertEqual(PageSelection.annotated.description, "annotated")
        XCTAssertEqual(PageSelection.ranges([PageRange(lower: 1, upper: 3), PageRange(lower: 5, upper: 5), PageRange(lower: 8, upper: nil)]).description, "1-3,5,8-")
    }

    func indexes(_ selection: String, pages: Int, annotated: [Int] = []) throws -> [Int] {
        let parsed = try XCTUnwrap(try list(selection).get().first)
        return parsed.pageIndexes(pageCount: pages) { annotated }
    }

    func testPageIndexes() throws {
        XCTAssertEqual(try indexes("all", pages: 4), [0, 1, 2, 3])
        XCTAssertEqual(try indexes("first", pages: 4), [0])
        XCTAssertEqual(try indexes("last", pages: 4), [3])
        XCTAssertEqual(try indexes("last", pages: 1), [0])
        XCTAssertEqual(try indexes("annotated", pages: 9, annotated: [2, 6]), [2, 6])
        XCTAssertEqual(try indexes("annotated", pages: 9), [])
        XCTAssertEqual(try indexes("1-3,5,8-", pages: 10), [0, 1, 2, 4, 7, 8, 9])
        XCTAssertEqual(try indexes("1-3,5,8-", pages: 4), [0, 1, 2], "pages past the end are ignored")
        XCTAssertEqual(try indexes("8-", pages: 8), [7])
        XCTAssertEqual(try indexes("8-", pages: 7), [])
        XCTAssertEqual(try indexes("2-100", pages: 3), [1, 2])
        XCTAssertEqual(try indexes("5,1,3", pages: 5), [0, 2, 4], "document order")
        XCTAssertEqual(try indexes("1-3,2-4", pages: 5), [0, 1, 2, 3], "each page once")
        XCTAssertEqual(try indexes("7-9", pages: 5), [], "out of range: nothing")
        for selection in ["all", "first", "last", "1-3"] {
            XCTAssertEqual(try indexes(selection, pages: 0), [], "a document without pages: \(selection)")
        }
    }
}
