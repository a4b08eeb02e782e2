// Fuzz target: the page-selection parser (`PageSelection.parseList`, the value
// of export.pages / print.pages) and `pageIndexes`, which turns a selection into
// the page indexes the PDF shim keeps.
//
// Input: `PAGES\nSELECTION` (e.g. "12\n1-3,5,8-"), the page count of the
// document first; without a leading number line the whole input is the
// selection and the page count comes from the input's length.
import FuzzSupport
import HotFolderKit

@main
enum PageRangeFuzz {
    static func main() { fuzzMain(LLVMFuzzerTestOneInput) }
}

/// Above this, pageIndexes(.all) only costs time, not coverage.
let maxPages = 1000

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = text(data, size)
    var selectionText = Substring(input)
    var pageCount = size % 64
    if let newline = input.firstIndex(of: "\n"), let n = Int(input[..<newline]) {
        pageCount = min(max(n, 0), maxPages)
        selectionText = input[input.index(after: newline)...]
    }

    // The annotated pages the PDF shim would report: some of the document's pages.
    let annotated = stride(from: size % 3, to: pageCount, by: 3).map { $0 }

    switch PageSelection.parseList(String(selectionText)) {
    case .failure(let message):
        check(!message.text.isEmpty, "empty message for \"\(selectionText)\"")
    case .success(let selections):
        check(!selections.isEmpty, "no selection accepted from \"\(selectionText)\"")
        // What `hotfolder check` prints and the journal records parses back to the same.
        let printed = selections.map(\.description).joined(separator: ",")
        check((try? PageSelection.parseList(printed).get()) == selections,
              "\"\(selectionText)\" prints as \"\(printed)\", which parses differently")
        for selection in selections {
            if case .ranges(let ranges) = selection {
                check(!ranges.isEmpty, "empty range list from \"\(selectionText)\"")
                for r in ranges {
                    check(r.lower >= 1 && (r.upper.map { $0 >= r.lower } ?? true), "bad range \(r) from \"\(selectionText)\"")
                }
                check(PageSelection.parseRanges(selection.description).map { $0 == ranges } == .success(true),
                      "parseRanges disagrees on \"\(selection)\"")
            }
            // The shim requires ascending, unique, in-range indexes.
            let indexes = selection.pageIndexes(pageCount: pageCount) { annotated }
            check(indexes.allSatisfy { (0..<pageCount).contains($0) }, "\(selection) of \(pageCount) pages: index out of range in \(indexes.prefix(20))")
            check(zip(indexes, indexes.dropFirst()).allSatisfy { $0 < $1 }, "\(selection) of \(pageCount) pages: not ascending")
            if pageCount > 0, selection == .all || selection == .first || selection == .last {
                check(!indexes.isEmpty, "\(selection) of \(pageCount) pages selects nothing")
            }
            if case .ranges(let ranges) = selection {
                let expected = ranges.reduce(into: Set<Int>()) { set, r in
                    guard r.lower <= pageCount else { return }
                    set.formUnion((r.lower - 1)..<min(r.upper ?? pageCount, pageCount))
                }
                check(Set(indexes) == expected, "\(selection) of \(pageCount) pages gives \(indexes.prefix(20))")
            }
        }
    }
    return 0
}
