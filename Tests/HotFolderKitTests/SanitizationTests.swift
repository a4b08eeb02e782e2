import Foundation
import XCTest
@testable import HotFolderKit

/// Option sanitization (seed 000's tables, adapted): each rule, the defaults,
/// what a ticket may pick, and `check` rejecting configurations no document can pass.
final class SanitizationTests: XCTestCase {
    func sharing(_ lines: String, _ kind: DestinationKind = .export) throws -> SharingConfiguration {
        let temp = TemporaryFolder("hf-sanitize")
        _ = temp.sub("drop")
        let destination = kind == .export ? "export.to = out\n" : "print.printer = q\n"
        let config = try configuration("[folder f]\npath = drop\n" + destination + lines, in: temp)
        let folder = try XCTUnwrap(config.folder(named: "f"))
        return try XCTUnwrap(kind == .export ? folder.export : folder.print)
    }

    typealias Doc = OptionResolver.Document
    let pdf1 = Doc(type: .pdf, pages: 1, annotations: 0)
    let pdf5 = Doc(type: .pdf, pages: 5, annotations: 3)
    let pdf5Plain = Doc(type: .pdf, pages: 5, annotations: 0)
    let pdf30 = Doc(type: .pdf, pages: 30, annotations: 3)
    let jpeg = Doc(type: .jpeg, pages: 1, annotations: 0)
    let docx = Doc(type: .zip, pages: 0, annotations: 0)

    func resolve(_ s: SharingConfiguration, _ d: Doc, ticket: String? = nil) throws -> ResolvedOptions {
        var choices: JobTicket.Choices?
        if let ticket { choices = try JobTicket.parse(ticket, file: "t").get().choices(for: s.destination) }
        return try OptionResolver.resolve(s, document: d, ticket: choices)
    }

    func failure(_ s: SharingConfiguration, _ d: Doc, ticket: String? = nil) throws -> JobFailure {
        do {
            let r = try resolve(s, d, ticket: ticket)
            XCTFail("resolved to \(r)")
            throw XCTSkip("no failure")
        } catch let f as JobFailure {
            return f
        }
    }

    // MARK: - file format

    func testFormatDefaultsFollowTheDocumentNotTheListOrder() throws {
        let all = try sharing("export.format = pdf, original, image\n")
        XCTAssertEqual(try resolve(all, jpeg).format, .image, "image input and image allowed → image")
        XCTAssertEqual(try resolve(all, docx).format, .original, "non-PDF and original allowed → original")
        XCTAssertEqual(try resolve(all, pdf5).format, .pdf, "else pdf")
        let noImage = try sharing("export.format = pdf, original\n")
        XCTAssertEqual(try resolve(noImage, jpeg).format, .original, "an image as original where image is not allowed")
        let pdfOnly = try sharing("export.format = pdf\n")
        XCTAssertEqual(try resolve(pdfOnly, jpeg).format, .pdf, "an image becomes a PDF page")
        let imageFirst = try sharing("export.format = image, pdf\n")
        XCTAssertEqual(try resolve(imageFirst, pdf5).format, .pdf, "a PDF goes as pdf by default even when image comes first")
        XCTAssertEqual(try resolve(try sharing("export.format = image\n"), pdf5).format, .image)
    }

    func testAFormatThatNeedsAConvertibleDocumentIsRemoved() throws {
        let f = try failure(try sharing("export.format = pdf, image\n"), docx)
        XCTAssertEqual(f.step, .options)
        XCTAssertTrue(f.reason.contains("export.format"), f.reason)
        XCTAssertTrue(f.reason.contains("ZIP archive"), f.reason)
        XCTAssertTrue(f.remedy.contains("allow original"), f.remedy)
    }

    // MARK: - page selection

    func testASinglePageDocumentAlwaysUsesAll() throws {
        XCTAssertEqual(try resolve(try sharing("export.pages = last\n"), pdf1).pages, .all)
        XCTAssertEqual(try resolve(try sharing("export.pages = 4-9\n"), pdf1).pages, .all)
        XCTAssertEqual(try resolve(try sharing("export.pages = annotated\n"), pdf1).pages, .all)
    }

    func testAnnotatedIsRemovedWithoutAnnotationsAndTheNextOptionApplies() throws {
        let s = try sharing("export.pages = annotated, first\n")
        XCTAssertEqual(try resolve(s, pdf5).pages, .annotated)
        XCTAssertEqual(try resolve(s, pdf5Plain).pages, .first)
        let only = try failure(try sharing("export.pages = annotated\n"), pdf5Plain)
        XCTAssertTrue(only.reason.contains("no option of export.pages"), only.reason)
        XCTAssertTrue(only.reason.contains("no page of this document carries annotations"), only.reason)
    }

    func testImageOutputOfALongDocumentRemovesAllAndAnnotated() throws {
        let s = try sharing("export.format = image\nexport.pages = all, annotated, first\n")
        XCTAssertEqual(try resolve(s, pdf5).pages, .all, "5 pages ≤ 20")
        XCTAssertEqual(try resolve(s, pdf30).pages, .first, "30 pages > image.max-pages 20")
        let strict = try failure(try sharing("export.format = image\nexport.pages = all\nexport.image.max-pages = 4\n"), pdf5)
        XCTAssertTrue(strict.reason.contains("export.image.max-pages = 4"), strict.reason)
        XCTAssertEqual(try resolve(try sharing("export.format = pdf\nexport.pages = all\n"), pdf30).pages, .all, "the rule is about images only")
    }

    func testRangeComesOnlyFromATicket() throws {
        let s = try sharing("export.pages = range, all\n")
        XCTAssertEqual(try resolve(s, pdf5).pages, .all, "no ticket: range does not apply")
        XCTAssertEqual(try resolve(s, pdf5, ticket: "pages = 2-3\n").pages, .ranges([PageRange(lower: 2, upper: 3)]))
        let outside = try failure(s, pdf5, ticket: "pages = 8-9\n")
        XCTAssertEqual(outside.step, .ticket)
        XCTAssertTrue(outside.reason.contains("selects no page of this 5-page document"), outside.reason)
        let notAllowed = try failure(try sharing("export.pages = all, first\n"), pdf5, ticket: "pages = 2-3\n")
        XCTAssertTrue(notAllowed.reason.contains("which export.pages does not allow (allowed: all, first)"), notAllowed.reason)
    }

    // MARK: - annotations

    func testSummaryOfADocumentWithoutAnnotationsGoesAsEmbed() throws {
        let s = try sharing("export.annotations = summary\n")
        XCTAssertEqual(try resolve(s, pdf5).annotations, .summary)
        let plain = try resolve(s, pdf5Plain)
        XCTAssertEqual(plain.annotations, .embed)
        XCTAssertTrue(plain.notes.first?.contains("no summary added") == true, "\(plain.notes)")
    }

    func testTheFirstAllowedAnnotationOptionIsTheDefaultAndATicketPicksAnother() throws {
        let s = try sharing("export.annotations = flatten, embed\n")
        XCTAssertEqual(try resolve(s, pdf5).annotations, .flatten)
        XCTAssertEqual(try resolve(s, pdf5, ticket: "annotations = embed\n").annotations, .embed)
        let refused = try failure(s, pdf5, ticket: "annotations = remove\n")
        XCTAssertEqual(refused.step, .ticket)
        XCTAssertTrue(refused.reason.contains("remove, which export.annotations does not allow (allowed: flatten, embed)"), refused.reason)
        XCTAssertTrue(refused.remedy.contains("allow remove in export.annotations"), refused.remedy)
    }

    func testAPDFThatForbidsChangingItsAnnotationsKeepsThem() throws {
        let locked = Doc(type: .pdf, pages: 5, annotations: 3, annotationsLocked: true)
        XCTAssertEqual(try resolve(try sharing("export.annotations = flatten, embed\n"), locked).annotations, .embed, "falls to embed")
        let f = try failure(try sharing("export.annotations = remove\n"), locked)
        XCTAssertTrue(f.reason.contains("export.annotations = remove would change the annotations, and the PDF's permissions forbid changing them"), f.reason)
        XCTAssertTrue(f.remedy.contains("ask the author"), f.remedy)
        XCTAssertEqual(try resolve(try sharing("", .print), locked).annotations, .flattenForPrint, "printing them changes nothing")
        let none = Doc(type: .pdf, pages: 5, annotations: 0, annotationsLocked: true)
        XCTAssertEqual(try resolve(try sharing("export.annotations = flatten\n"), none).annotations, .flatten, "nothing to change, nothing forbidden")
    }

    // MARK: - print choices

    func testTicketCopiesAndSidesStayWithinWhatTheFolderAllows() throws {
        let s = try sharing("print.sides = one-sided, two-sided-long-edge\nprint.max-copies = 3\n", .print)
        XCTAssertEqual(try resolve(s, pdf5).sides, "one-sided")
        let picked = try resolve(s, pdf5, ticket: "copies = 3\nsides = two-sided-long-edge\n")
        XCTAssertEqual(picked.copies, 3)
        XCTAssertEqual(picked.sides, "two-sided-long-edge")
        XCTAssertTrue(try failure(s, pdf5, ticket: "copies = 4\n").reason.contains("at most 3"))
        XCTAssertTrue(try failure(s, pdf5, ticket: "sides = two-sided-short-edge\n").reason.contains("allows sides = one-sided, two-sided-long-edge"))
        let noSides = try sharing("", .print)
        XCTAssertTrue(try failure(noSides, pdf5, ticket: "sides = one-sided\n").reason.contains("print.sides is not set"))
        XCTAssertEqual(try resolve(noSides, pdf5, ticket: "copies = 10\n").copies, 10, "default limit: 10")
    }

    func testPrefixedTicketKeysApplyToOneDestination() throws {
        let ticket = try JobTicket.parse("copies = 2\nexport.pages = first\nprint.pages = last\ntitle = Für dich\n", file: "t").get()
        XCTAssertEqual(ticket.choices(for: .export).pages, .first)
        XCTAssertEqual(ticket.choices(for: .print).pages, .last)
        XCTAssertEqual(ticket.choices(for: .print).copies, 2)
        XCTAssertEqual(ticket.choices(for: .export).title, "Für dich")
    }

    func testTicketProblemsNameTheLine() throws {
        guard case .failure(let problems) = JobTicket.parse("pages = 1-2\ncopeis = 3\nannotations = blur\npages = 3\nnot a line\n", file: "t") else {
            return XCTFail("accepted")
        }
        let text = problems.description
        XCTAssertTrue(text.contains("line 2: unknown key copeis"), text)
        XCTAssertTrue(text.contains("did you mean \"copies\"?"), text)
        XCTAssertTrue(text.contains("line 3: annotations must be one of"), text)
        XCTAssertTrue(text.contains("line 4: pages is set twice"), text)
        XCTAssertTrue(text.contains("line 5: expected key = value"), text)
    }

    func testHostileTicketValuesStayHarmless() throws {
        let nul = "name = a\u{0}b\u{202E}c\ntitle = \(String(repeating: "x", count: 5000))\n"
        let ticket = try JobTicket.parse(nul, file: "t").get()
        XCTAssertEqual(ticket.common.name, "ab\u{202E}c", "control characters removed; the name sanitizer handles the rest")
        XCTAssertEqual(ticket.common.title?.count, 1000, "bounded")
        let name = FileNameSanitizer.fileName(rendered: "../../etc/passwd", ext: "pdf")
        XCTAssertFalse(name.contains("/"), name)
    }

    // MARK: - check

    func testCheckRejectsAConfigurationThatFailsEveryDocument() throws {
        let temp = TemporaryFolder("hf-check")
        _ = temp.sub("drop")
        // A host embedding the engine can build what the file syntax cannot: no page selection at all.
        var empty = try sharing("")
        empty.pageSelections = []
        let messages = OptionResolver.emptyForEveryDocument(empty, folder: FolderConfiguration(name: "f"))
        XCTAssertEqual(messages.count, 1)
        XCTAssertTrue(messages.first?.contains("no document could be exported") == true, "\(messages)")
        // Rules that spare some documents are accepted: a single page is always `all`,
        // so `range` without tickets still serves one-page documents.
        XCTAssertNoThrow(try ServiceConfiguration.parse(text: "[folder f]\npath = drop\nexport.to = out\nexport.pages = range\n", file: temp.path + "/c.conf"))
        XCTAssertNoThrow(try ServiceConfiguration.parse(text: "[folder f]\npath = drop\nexport.to = out\nexport.pages = annotated\n", file: temp.path + "/c.conf"))
        XCTAssertThrowsError(try ServiceConfiguration.parse(text: "[folder f]\npath = drop\nprint.printer = q\nprint.format = image\n", file: temp.path + "/c.conf")) { error in
            XCTAssertTrue("\(error)".contains("image is not a print format"), "\(error)")
        }
        XCTAssertThrowsError(try ServiceConfiguration.parse(text: "[folder f]\npath = drop\nexport.to = out\nallow = print\n", file: temp.path + "/c.conf")) { error in
            XCTAssertTrue("\(error)".contains("allow names print, but folder f has no print settings"), "\(error)")
        }
        XCTAssertThrowsError(try ServiceConfiguration.parse(text: "[folder f]\npath = drop\nexport.to = out\nallow = none\n", file: temp.path + "/c.conf")) { error in
            XCTAssertTrue("\(error)".contains("allows no destination: every document would wait"), "\(error)")
        }
    }

    func testNewKeysAreParsed() throws {
        let s = try sharing("export.format = image\nexport.image.type = jpg\nexport.image.dpi = 300\nexport.image.quality = 70\nexport.image.max-pages = 5\nexport.preview = yes\nexport.min-free = 1G\n")
        XCTAssertEqual(s.imageType, .jpeg)
        XCTAssertEqual(s.imageDPI, 300)
        XCTAssertEqual(s.imageQuality, 70)
        XCTAssertEqual(s.imageMaxPages, 5)
        XCTAssertTrue(s.preview)
        XCTAssertEqual(s.minFree, 1 << 30)
        let temp = TemporaryFolder("hf-keys")
        _ = temp.sub("drop")
        let folder = try XCTUnwrap(try configuration("[folder f]\npath = drop\nexport.to = out\ntickets = required\nticket-wait = 2m\nallow = export\n", in: temp).folder(named: "f"))
        XCTAssertEqual(folder.tickets, .required)
        XCTAssertEqual(folder.ticketWait, 120)
        XCTAssertEqual(folder.allow, [.export])
    }
}
