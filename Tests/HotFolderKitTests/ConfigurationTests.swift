import Foundation
import XCTest
@testable import HotFolderKit

final class ConfigurationTests: XCTestCase {
    static let file = "/etc/hotfolder/hotfolders.conf"

    func parse(_ lines: [String], file: String = ConfigurationTests.file) throws -> ServiceConfiguration {
        try ServiceConfiguration.parse(text: lines.joined(separator: "\n") + "\n", file: file)
    }

    /// The problems of a configuration that must be rejected.
    func problems(_ lines: [String], file: String = ConfigurationTests.file, sourceFile: StaticString = #filePath, line: UInt = #line) -> [ConfigurationProblem] {
        do {
            let config = try ServiceConfiguration.parse(text: lines.joined(separator: "\n") + "\n", file: file)
            XCTFail("accepted a bad configuration: \(config.resolvedDescription)", file: sourceFile, line: line)
            return []
        } catch {
            return error.problems
        }
    }

    /// Asserts that exactly one problem is on `line` and that it says every one of `phrases`.
    func assertProblem(_ problems: [ConfigurationProblem], line: Int, _ phrases: String..., file: StaticString = #filePath, sourceLine: UInt = #line) {
        let onLine = problems.filter { $0.line == line }
        XCTAssertEqual(onLine.count, 1, "one problem on line \(line), got: \(problems.map(\.description))", file: file, line: sourceLine)
        guard let problem = onLine.first else { return }
        for phrase in phrases {
            XCTAssertTrue(problem.message.contains(phrase), "\"\(problem.message)\" should say \"\(phrase)\"", file: file, line: sourceLine)
        }
        XCTAssertTrue(problem.description.hasPrefix("\(Self.file):\(line): "), problem.description, file: file, line: sourceLine)
    }

    // MARK: - accepted configurations

    func testResolvedDefaults() throws {
        let config = try parse([
            "[folder inbox]",
            "path = /srv/hot/inbox",
            "export.to = /srv/out/inbox",
        ])
        XCTAssertEqual(config.file, Self.file)
        XCTAssertEqual(config.workers, 2)
        XCTAssertEqual(config.logLevel, .info)
        XCTAssertNil(config.cupsServer)
        XCTAssertEqual(config.folders.count, 1)
        let folder = try XCTUnwrap(config.folder(named: "inbox"))
        XCTAssertEqual(folder.line, 1)
        XCTAssertEqual(folder.path, "/srv/hot/inbox")
        XCTAssertFalse(folder.recursive)
        XCTAssertEqual(folder.settle, 1)
        XCTAssertEqual(folder.include, [])
        XCTAssertEqual(folder.ignore, [])
        XCTAssertEqual(folder.doneFolder, "/srv/hot/inbox/done")
        XCTAssertEqual(folder.failedFolder, "/srv/hot/inbox/failed")
        XCTAssertEqual(folder.afterSuccess, .move)
        XCTAssertNil(folder.password)
        XCTAssertNil(folder.print)
        XCTAssertEqual(folder.serviceArea, "/srv/hot/inbox/.hotfolder")
        let export = try XCTUnwrap(folder.export)
        XCTAssertEqual(export.destination, .export)
        XCTAssertEqual(export.exportFolder, "/srv/out/inbox")
        XCTAssertEqual(export.collision, .rename)
        XCTAssertEqual(export.fileFormats, [.pdf])
        XCTAssertEqual(export.pageSelections, [.all])
        XCTAssertEqual(export.annotationOptions, [.embed])
        XCTAssertNil(export.title)
        XCTAssertEqual(export.name.source, "{stem}")
        XCTAssertEqual(folder.destinations.map(\.destination), [.export])
    }

    func testEveryKey() throws {
        let config = try parse([
            "# comment",
            "; another comment",
            "[service]",
            "workers = 4",
            "log-level = DEBUG",
            "cups-server = /run/cups/cups.sock",
            "",
            "[folder front-desk]",
            "path = /srv/hot/front",
            "recursive = yes",
            "settle = 500ms",
            "include = *.pdf, *.PDF",
            "ignore = draft-*",
            "done = /srv/archive/front",
            "failed = /srv/problems/front",
            "after-success = delete",
            "password = s3cret=yes",
            "export.to = /srv/out/front",
            "export.name = {title|stem} {date}.pdf",
            "export.title = {title}",
            "export.pages = first, 1-3,5, annotated",
            "export.annotations = flatten, embed",
            "export.format = pdf, original",
            "export.collision = replace",
            "print.printer = FrontDesk",
            "print.copies = 2",
            "print.sides = two-sided-long-edge",
            "print.media = A4",
            "print.color = Monochrome",
            "print.orientation = landscape",
            "print.options = fit-to-page=true job-sheets=\"none, none\"",
            "print.timeout = 10m",
        ])
        XCTAssertEqual(config.workers, 4)
        XCTAssertEqual(config.logLevel, .debug)
        XCTAssertEqual(config.cupsServer, "/run/cups/cups.sock")
        let f = try XCTUnwrap(config.folder(named: "front-desk"))
        XCTAssertEqual(f.line, 8)
        XCTAssertTrue(f.recursive)
        XCTAssertEqual(f.settle, 0.5, accuracy: 1e-9)
        XCTAssertEqual(f.include, ["*.pdf", "*.PDF"])
        XCTAssertEqual(f.ignore, ["draft-*"])
        XCTAssertEqual(f.doneFolder, "/srv/archive/front")
        XCTAssertEqual(f.failedFolder, "/srv/problems/front")
        XCTAssertEqual(f.afterSuccess, .delete)
        XCTAssertEqual(f.password, "s3cret=yes", "only the first = separates key and value")
        let e = try XCTUnwrap(f.export)
        XCTAssertEqual(e.name.source, "{title|stem} {date}.pdf")
        XCTAssertEqual(e.title?.source, "{title}")
        XCTAssertEqual(e.pageSelections, [.first, .ranges([PageRange(lower: 1, upper: 3), PageRange(lower: 5, upper: 5)]), .annotated])
        XCTAssertEqual(e.annotationOptions, [.flatten, .embed])
        XCTAssertEqual(e.fileFormats, [.pdf, .original])
        XCTAssertEqual(e.collision, .replace)
        let p = try XCTUnwrap(f.print)
        XCTAssertEqual(p.printer, "FrontDesk")
        XCTAssertEqual(p.copies, 2)
        XCTAssertEqual(p.sides, "two-sided-long-edge")
        XCTAssertEqual(p.media, "A4")
        XCTAssertEqual(p.color, "monochrome")
        XCTAssertEqual(p.orientation, "landscape")
        XCTAssertEqual(p.options, [PrintOption(name: "fit-to-page", value: "true"), PrintOption(name: "job-sheets", value: "none, none")])
        XCTAssertEqual(p.timeout, 600)
        XCTAssertEqual(p.annotationOptions, [.flattenForPrint], "printing flattens for print unless told otherwise")
        XCTAssertEqual(p.name.source, "{title|stem}")
        XCTAssertEqual(f.destinations.map(\.destination), [.export, .print])
        // The resolved description names every folder and the values in force.
        let description = config.resolvedDescription
        XCTAssertTrue(description.contains("[folder front-desk]"))
        XCTAssertTrue(description.contains("settle = 500 ms"), description)
        XCTAssertTrue(description.contains("password = (set)"), description)
        XCTAssertFalse(description.contains("s3cret"), "the password is never printed")
    }

    func testRelativePathsResolveAgainstTheConfigurationFolder() throws {
        let config = try parse([
            "[folder a]",
            "path = drop/a",
            "export.to = ../out/./a",
            "done = ./archive",
            "failed = /abs/failed",
        ], file: "/etc/hotfolder/conf.d/hf.conf")
        let a = try XCTUnwrap(config.folder(named: "a"))
        XCTAssertEqual(a.path, "/etc/hotfolder/conf.d/drop/a")
        XCTAssertEqual(a.export?.exportFolder, "/etc/hotfolder/out/a")
        XCTAssertEqual(a.doneFolder, "/etc/hotfolder/conf.d/archive")
        XCTAssertEqual(a.failedFolder, "/abs/failed")
    }

    func testRelativeConfigurationFileResolvesAgainstTheWorkingDirectory() throws {
        let config = try parse(["[folder a]", "path = drop", "export.to = out"], file: "hf.conf")
        let cwd = FileManager.default.currentDirectoryPath
        XCTAssertEqual(config.folder(named: "a")?.path, ConfigurationLoader.normalize(cwd + "/drop"))
    }

    func testHomeFolder() throws {
        let home = try XCTUnwrap(ProcessInfo.processInfo.environment["HOME"])
        let config = try parse(["[folder a]", "path = ~/hot", "export.to = ~/out"])
        XCTAssertEqual(config.folder(named: "a")?.path, ConfigurationLoader.normalize(home + "/hot"))
    }

    func testKeysAndSectionsAreCaseInsensitive() throws {
        let config = try parse(["[Folder Scans]", "Path = /srv/scans", "EXPORT.TO = /srv/out", "Recursive = On", "Settle = 2S"])
        let f = try XCTUnwrap(config.folder(named: "Scans"), "the folder name keeps its case")
        XCTAssertTrue(f.recursive)
        XCTAssertEqual(f.settle, 2)
        XCTAssertEqual(f.export?.exportFolder, "/srv/out")
    }

    func testDurations() {
        let cases: [(String, Double?)] = [
            ("0", 0), ("3", 3), ("1s", 1), ("1.5s", 1.5), ("500ms", 0.5), ("2m", 120), ("1h", 3600), (" 250 ms ", 0.25),
            ("fast", nil), ("-1s", nil), ("", nil), ("1d", nil), ("nan", nil), ("inf", nil), ("ms", nil),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(ConfigurationLoader.duration(text), expected, "\"\(text)\"")
        }
    }

    func testPrintOnlyFolder() throws {
        let config = try parse(["[folder station]", "path = /srv/print", "print.printer = Office"])
        let f = try XCTUnwrap(config.folder(named: "station"))
        XCTAssertNil(f.export)
        XCTAssertEqual(f.print?.printer, "Office")
    }

    func testSymlinkedSpellingOfTheSameFolderIsDetected() throws {
        let temp = TemporaryFolder("hf-config")
        defer { withExtendedLifetime(temp) {} } // the folder goes only when the test ends
        let real = temp.sub("real")
        XCTAssertEqual(symlink(real, temp.path + "/alias"), 0)
        let p = problems(["[folder a]", "path = \(real)", "export.to = /srv/out/a", "[folder b]", "path = \(temp.path)/alias", "export.to = /srv/out/b"])
        XCTAssertTrue(p.contains { $0.line == 4 && $0.message.contains("both watch") }, "\(p.map(\.description))")
    }

    // MARK: - rejected configurations

    func testUnknownSection() {
        let p = problems(["[foldr scans]", "path = /srv/scans", "[folder ok]", "path = /srv/ok", "export.to = /srv/out"])
        assertProblem(p, line: 1, "unknown section [foldr scans]", "did you mean \"folder\"?")
    }

    func testUnknownKeyWithSuggestion() {
        let p = problems([
            "[folder a]",
            "path = /srv/a",
            "setle = 1s",
            "export.to = /srv/out",
            "export.annotation = flatten",
            "frobnicate = yes",
        ])
        XCTAssertEqual(p.count, 3, "\(p.map(\.description))")
        assertProblem(p, line: 3, "unknown key setle", "did you mean \"settle\"?")
        assertProblem(p, line: 5, "unknown key export.annotation", "did you mean \"export.annotations\"?")
        assertProblem(p, line: 6, "unknown key frobnicate")
        XCTAssertFalse(p.first { $0.line == 6 }?.message.contains("did you mean") ?? true, "no suggestion for a word that is nothing like a key")
    }

    func testUnknownServiceKey() {
        let p = problems(["[service]", "worker = 3", "[folder a]", "path = /srv/a", "export.to = /srv/out"])
        assertProblem(p, line: 2, "unknown key worker in [service]", "did you mean \"workers\"?")
    }

    func testBadValues() {
        let p = problems([
            "[service]",
            "workers = 0",
            "log-level = loud",
            "[folder a]",
            "path = /srv/a",
            "settle = fast",
            "recursive = maybe",
            "export.to = /srv/out",
            "export.collision = bogus",
            "export.pages = 0-3",
            "print.printer = Office",
            "print.copies = 0",
            "after-success = archive",
            "export.annotations = flaten",
            "export.format = tiff",
            "print.sides = two-sided",
            "export.name = {titel}.pdf",
            "print.timeout = 0",
            "print.printer2 = x",
            "print.options = =broken",
            "export.pages = 3-1",
        ])
        assertProblem(p, line: 2, "workers must be a number from 1 to 256", "\"0\"")
        assertProblem(p, line: 3, "log-level must be one of debug, info, warning, error", "\"loud\"")
        assertProblem(p, line: 6, "settle must be a duration", "\"fast\"")
        assertProblem(p, line: 7, "recursive must be yes or no", "\"maybe\"")
        assertProblem(p, line: 9, "export.collision must be rename, replace or fail", "\"bogus\"")
        assertProblem(p, line: 10, "export.pages", "\"0-3\" is not a page range", "numbered from 1")
        assertProblem(p, line: 12, "print.copies must be a number from 1 to 999", "\"0\"")
        assertProblem(p, line: 13, "after-success must be move or delete", "\"archive\"")
        assertProblem(p, line: 14, "export.annotations: unknown option \"flaten\"", "did you mean \"flatten\"?")
        assertProblem(p, line: 15, "export.format: unknown option \"tiff\"")
        assertProblem(p, line: 16, "print.sides must be one of", "did you mean \"one-sided\"?")
        assertProblem(p, line: 17, "unknown placeholder {titel}", "did you mean \"title\"?")
        assertProblem(p, line: 18, "print.timeout must be a duration")
        assertProblem(p, line: 19, "unknown key print.printer2", "did you mean \"print.printer\"?")
        assertProblem(p, line: 20, "print.options")
        assertProblem(p, line: 21, "export.pages is set twice (first on line 10)")
        XCTAssertEqual(p.count, 16, "\(p.map(\.description))")
        XCTAssertEqual(p.map(\.line), p.map(\.line).sorted(), "problems come in file order")
    }

    func testPrinterNameMustBeAQueueName() {
        let p = problems(["[folder a]", "path = /srv/a", "print.printer = Front Desk"])
        assertProblem(p, line: 3, "is not a CUPS queue name")
    }

    func testMissingPath() {
        let p = problems(["[folder ok]", "path = /srv/ok", "export.to = /srv/out/ok", "", "[folder nowhere]", "export.to = /srv/out/x"])
        assertProblem(p, line: 5, "folder nowhere has no path")
        XCTAssertEqual(p.count, 1, "\(p.map(\.description))")
    }

    func testEmptyPath() {
        let p = problems(["[folder a]", "path =", "export.to = /srv/out"])
        assertProblem(p, line: 2, "path is empty")
    }

    func testFolderWithoutDestination() {
        let p = problems(["[folder lonely]", "path = /srv/lonely", "settle = 2s"])
        assertProblem(p, line: 1, "folder lonely has no destination", "export.to", "print.printer")
        XCTAssertEqual(p.count, 1)
    }

    func testExportKeysWithoutExportTo() {
        let p = problems(["[folder a]", "path = /srv/a", "export.annotations = flatten", "export.name = {stem}-flat"])
        assertProblem(p, line: 1, "folder a has export settings but no export.to folder")
        XCTAssertEqual(p.count, 1, "\(p.map(\.description))")
    }

    /// Every problem at once: a missing export.to must not hide behind
    /// another problem of the same folder (and the other way round).
    func testExportKeysWithoutExportToAndAnotherProblem() {
        let p = problems(["[folder a]", "path = /srv/a", "export.collision = bogus"])
        assertProblem(p, line: 3, "export.collision must be rename, replace or fail")
        assertProblem(p, line: 1, "folder a has export settings but no export.to folder")
    }

    func testDuplicateKey() {
        let p = problems(["[folder a]", "path = /srv/a", "export.to = /srv/out", "", "settle = 1s", "settle = 2s"])
        assertProblem(p, line: 6, "settle is set twice (first on line 5)")
        XCTAssertEqual(p.count, 1)
    }

    func testDuplicateKeyIsCaseInsensitive() {
        let p = problems(["[folder a]", "path = /srv/a", "export.to = /srv/out", "PATH = /srv/b"])
        assertProblem(p, line: 4, "path is set twice (first on line 2)")
    }

    func testFolderDefinedTwice() {
        let p = problems(["[folder a]", "path = /srv/a", "export.to = /srv/out/a", "[folder a]", "path = /srv/b", "export.to = /srv/out/b"])
        assertProblem(p, line: 4, "folder \"a\" is defined twice")
    }

    func testFolderWithoutName() {
        let p = problems(["[folder]", "path = /srv/a", "export.to = /srv/out/a", "[folder ok]", "path = /srv/ok", "export.to = /srv/out/ok"])
        assertProblem(p, line: 1, "a folder section needs a name")
    }

    func testServiceSectionTwice() {
        let p = problems(["[service]", "workers = 1", "[service]", "log-level = info", "[folder a]", "path = /srv/a", "export.to = /srv/out"])
        assertProblem(p, line: 3, "[service] appears twice")
    }

    func testNoFolderAtAll() {
        let p = problems(["[service]", "workers = 2"])
        XCTAssertEqual(p.count, 1)
        XCTAssertEqual(p.first?.line, 0)
        XCTAssertTrue(p.first?.message.contains("nothing to watch") == true)
    }

    func testSyntaxErrors() {
        let p = problems(["workers = 2", "[folder a", "[folder b]", "path /srv/b", "path = /srv/b", "export.to = /srv/out"])
        assertProblem(p, line: 1, "workers is outside any section")
        assertProblem(p, line: 2, "section header must end with ]")
        assertProblem(p, line: 4, "expected key = value")
    }

    func testWindowsLineEndings() throws {
        let text = "[folder a]\r\npath = /srv/a\r\nexport.to = /srv/out\r\nsettle = 2s\r\n"
        let config = try ServiceConfiguration.parse(text: text, file: Self.file)
        XCTAssertEqual(config.folder(named: "a")?.path, "/srv/a")
        XCTAssertEqual(config.folder(named: "a")?.settle, 2)
    }

    func testTwoFoldersWithTheSamePath() {
        let p = problems([
            "[folder a]", "path = /srv/hot/same", "export.to = /srv/out/a",
            "[folder b]", "path = /srv/hot/same/", "export.to = /srv/out/b",
        ])
        XCTAssertTrue(p.contains { $0.line == 4 && $0.message.contains("folders a and b both watch /srv/hot/same") }, "\(p.map(\.description))")
    }

    func testDropFolderInsideAnotherFoldersExportFolder() {
        let p = problems([
            "[folder producer]", "path = /srv/hot/producer", "export.to = /srv/shared",
            "[folder consumer]", "path = /srv/shared/consumer", "export.to = /srv/out/consumer",
        ])
        XCTAssertEqual(p.count, 1, "\(p.map(\.description))")
        assertProblem(p, line: 4, "folder consumer watches /srv/shared/consumer, which is inside the export folder of producer", "reprocessing loop")
    }

    func testDropFolderIsAnotherFoldersExportFolder() {
        let p = problems([
            "[folder producer]", "path = /srv/hot/producer", "export.to = /srv/hot/consumer",
            "[folder consumer]", "path = /srv/hot/consumer", "export.to = /srv/out/consumer",
        ])
        assertProblem(p, line: 4, "inside the export folder of producer", "reprocessing loop")
    }

    func testAnotherFoldersExportFolderInsideADropFolder() {
        let p = problems([
            "[folder a]", "path = /srv/hot/a", "export.to = /srv/out/a",
            "[folder b]", "path = /srv/hot/b", "export.to = /srv/hot/a/from-b",
        ])
        XCTAssertEqual(p.count, 1, "\(p.map(\.description))")
        assertProblem(p, line: 1, "the export folder of b (/srv/hot/a/from-b) is inside the drop folder of a (/srv/hot/a)", "reprocessing loop")
    }

    func testAnotherFoldersDoneFolderInsideADropFolder() {
        let p = problems([
            "[folder a]", "path = /srv/hot/a", "export.to = /srv/out/a",
            "[folder b]", "path = /srv/hot/b", "export.to = /srv/out/b", "done = /srv/hot/a/b-done",
        ])
        assertProblem(p, line: 1, "the done folder of b", "is inside the drop folder of a")
    }

    func testExportFolderIsItsOwnDropFolder() {
        let p = problems(["[folder loop]", "path = /srv/hot/loop", "export.to = /srv/hot/loop"])
        XCTAssertEqual(p.count, 1, "\(p.map(\.description))")
        assertProblem(p, line: 1, "folder loop: its export folder is the drop folder itself")
    }

    func testDoneFolderIsItsOwnDropFolder() {
        let p = problems(["[folder loop]", "path = /srv/hot/loop", "export.to = /srv/out", "done = /srv/hot/loop"])
        assertProblem(p, line: 1, "its done folder is the drop folder itself")
    }

    func testDropFolderInsideItsOwnExportFolder() {
        let p = problems(["[folder inner]", "path = /srv/out/inner", "export.to = /srv/out"])
        assertProblem(p, line: 1, "the drop folder /srv/out/inner is inside its own export folder /srv/out")
    }

    func testOwnOutputFoldersInsideTheDropFolderAreFine() throws {
        let config = try parse(["[folder a]", "path = /srv/hot/a", "export.to = /srv/hot/a/out", "done = /srv/hot/a/archive", "recursive = yes"])
        XCTAssertEqual(config.folder(named: "a")?.export?.exportFolder, "/srv/hot/a/out")
    }

    func testRootIsNoDropFolder() {
        let p = problems(["[folder root]", "path = /", "export.to = /srv/out"])
        XCTAssertTrue(p.contains { $0.line == 2 && $0.message.contains("the root folder cannot be a drop folder") }, "\(p.map(\.description))")
    }

    func testSeveralProblemsAtOnceEachWithFileAndLine() {
        let file = "/etc/hf/bad.conf"
        let p = problems([
            "[service]",          // 1
            "workers = many",     // 2
            "",                   // 3
            "[folder a]",         // 4
            "path = /srv/a",      // 5
            "setle = 1s",         // 6
            "export.to = /srv/o", // 7
            "",                   // 8
            "[folder b]",         // 9
            "export.to = /srv/p", // 10
            "recursive = maybe",  // 11
            "[colour]",           // 12
        ], file: file)
        let lines = p.map(\.line)
        XCTAssertEqual(Set(lines), [2, 6, 9, 11, 12], "\(p.map(\.description))")
        for problem in p {
            XCTAssertEqual(problem.file, file)
            XCTAssertTrue(problem.description.hasPrefix("\(file):\(problem.line): "), problem.description)
        }
        let all = ConfigurationErrors(problems: p).description
        XCTAssertEqual(all.split(separator: "\n").count, p.count, "one line per problem")
    }

    func testLoadReportsAnUnreadableFile() {
        do {
            _ = try ServiceConfiguration.load(file: "/nonexistent/hotfolders.conf")
            XCTFail("loaded a missing file")
        } catch {
            XCTAssertEqual(error.problems.count, 1)
            XCTAssertTrue(error.description.hasPrefix("/nonexistent/hotfolders.conf:0: cannot read the configuration"), error.description)
        }
    }
}
