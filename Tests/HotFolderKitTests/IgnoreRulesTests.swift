import XCTest
@testable import HotFolderKit

final class IgnoreRulesTests: XCTestCase {
    let builtIn = IgnoreRules()

    func testBuiltInFileList() {
        let junk = ["._x.pdf", ".DS_Store", "Thumbs.db", "thumbs.DB", "desktop.ini", "Desktop.INI", "~$doc.pdf", ".~lock.x#",
                    ".~lock.report.odt#", "x.part", "x.PART", "x.crdownload", "x.tmp", "x.partial", "x.filepart", ".hidden.pdf"]
        for name in junk {
            XCTAssertNotNil(builtIn.reasonToSkip(file: name), name)
            XCTAssertTrue(builtIn.reasonToSkip(file: name)?.hasPrefix("built-in ignore pattern") == true, name)
        }
        let documents = ["report.pdf", "REPORT.PDF", "x.part.pdf", "~report.pdf", "Thumbs.db.pdf", "lock.x#", "scan 01 (2).pdf", "日本語.pdf", "a.tmp.pdf"]
        for name in documents {
            XCTAssertNil(builtIn.reasonToSkip(file: name), name)
        }
    }

    func testBuiltInFolderList() {
        for folder in ["@eaDir", "@EADIR", "__MACOSX", "__macosx", ".Trashes", ".hotfolder", ".git"] {
            XCTAssertTrue(builtIn.skipsFolder(folder), folder)
        }
        for folder in ["scans", "2024", "eaDir", "MACOSX", "done"] {
            XCTAssertFalse(builtIn.skipsFolder(folder), folder)
        }
    }

    func testIgnorePatterns() {
        let rules = IgnoreRules(ignore: ["draft-*", "*.bak", "tmp"])
        XCTAssertEqual(rules.reasonToSkip(file: "Draft-1.pdf"), "ignore pattern draft-*")
        XCTAssertEqual(rules.reasonToSkip(file: "x.BAK"), "ignore pattern *.bak")
        XCTAssertNil(rules.reasonToSkip(file: "final.pdf"))
        XCTAssertTrue(rules.skipsFolder("TMP"), "ignore patterns skip folders too")
        XCTAssertFalse(rules.skipsFolder("final"))
        XCTAssertEqual(rules.reasonToSkip(file: ".DS_Store")?.hasPrefix("built-in"), true, "the built-in list comes first")
    }

    func testIncludePatterns() {
        let rules = IgnoreRules(include: ["*.pdf", "scan-??.*"])
        XCTAssertNil(rules.reasonToSkip(file: "a.pdf"))
        XCTAssertNil(rules.reasonToSkip(file: "A.PDF"), "case-insensitive")
        XCTAssertNil(rules.reasonToSkip(file: "scan-01.tiff"))
        XCTAssertEqual(rules.reasonToSkip(file: "notes.txt"), "no include pattern matches")
        XCTAssertEqual(rules.reasonToSkip(file: "scan-001.tiff"), "no include pattern matches")
        XCTAssertNotNil(rules.reasonToSkip(file: "x.part"), "include never overrides the built-in list")
        XCTAssertNil(rules.reasonToSkip(file: "a.pdf.ticket"), "a document's job ticket is included with it")
        XCTAssertEqual(rules.reasonToSkip(file: "notes.txt.ticket"), "no include pattern matches")
    }

    func testIgnoreWinsOverInclude() {
        let rules = IgnoreRules(ignore: ["secret*"], include: ["*.pdf"])
        XCTAssertEqual(rules.reasonToSkip(file: "secret.pdf"), "ignore pattern secret*")
        XCTAssertNil(rules.reasonToSkip(file: "public.pdf"))
    }

    func testBracketsAndSpecialCharactersInNames() {
        let rules = IgnoreRules(include: ["*.pdf"])
        XCTAssertNil(rules.reasonToSkip(file: "report[1].pdf"))
        XCTAssertNil(rules.reasonToSkip(file: "a*b?.pdf"))
    }
}
