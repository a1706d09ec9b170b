"""The contacts connector: vCard 2.1/3.0/4.0, Google Contacts CSV and macOS AddressBook databases,
one document per contact, bad cards reported alone, incremental per file, identities for person
resolution. Fixtures are written here (the public corpus is the differential's)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from ragbag import connectors
from ragbag.connectors import contacts
from ragbag.core.records import Cursor, Document, ReadError, Seen
from ragbag_evalsets.formats.contacts import Person, google_csv, vcard

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "public" / "contacts"


def read(path: Path, cursor=None, **options):
    items = list(contacts.read(path, "c", cursor, options=options or None))
    docs = [i for i in items if isinstance(i, Document)]
    errors = [i for i in items if isinstance(i, ReadError)]
    seen = [i for i in items if isinstance(i, Seen)]
    cursors = [i for i in items if isinstance(i, Cursor)]
    assert items and isinstance(items[-1], Cursor) and len(cursors) == 1
    return docs, errors, seen, cursors[0].state


def by_title(docs: list[Document]) -> dict[str, Document]:
    return {d.title: d for d in docs}


def test_registered():
    assert connectors.get("contacts") is contacts


V21 = (
    "BEGIN:VCARD\r\n"
    "VERSION:2.1\r\n"
    "N;CHARSET=ISO-8859-1;ENCODING=QUOTED-PRINTABLE:M=FCller;J=FCrgen;;;\r\n"
    "FN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:J=C3=BCrgen M=C3=BCller, Vertrieb und Einkauf bei der Firma Beispiel=\r\n"
    "=20GmbH\r\n"
    "TEL;CELL;PREF:0171 5550123\r\n"
    "TEL;WORK;VOICE:+49 30 5550987\r\n"
    "EMAIL;INTERNET:Juergen.Mueller@Example.DE\r\n"
    "NOTE;ENCODING=QUOTED-PRINTABLE:Zeile eins=0D=0AZeile zwei\r\n"
    "PHOTO;ENCODING=BASE64;TYPE=JPEG:\r\n"
    "/9j/4AAQSkZJRgABAQAAAQABAAD\r\n"
    "AAgAAgESAAMAAAABAAEAAIdpAAQ\r\n"
    "\r\n"
    "X-AIM:juergen42\r\n"
    "END:VCARD\r\n"
)


def test_vcard_21_quoted_printable_charsets_soft_breaks_and_base64(tmp_path):
    (tmp_path / "old.vcf").write_bytes(V21.encode("ascii"))
    docs, errors, _, _ = read(tmp_path, region="DE")
    assert not errors
    (doc,) = docs
    assert doc.title == "Jürgen Müller, Vertrieb und Einkauf bei der Firma Beispiel GmbH"
    assert "Name: Jürgen Müller" in doc.text
    assert doc.metadata["emails"] == ["juergen.mueller@example.de"]
    assert doc.metadata["phones"] == ["+491715550123", "+49305550987"]
    assert doc.metadata["phones_raw"] == ["0171 5550123", "+49 30 5550987"]
    assert doc.metadata["handles"] == ["aim:juergen42"]
    assert "Note: Zeile eins\nZeile zwei" in doc.text
    assert "Phone (cell): 0171 5550123 (+491715550123)" in doc.text
    assert "/9j/" not in doc.text


def test_without_a_region_national_numbers_stay_as_written(tmp_path):
    (tmp_path / "old.vcf").write_bytes(V21.encode("ascii"))
    (doc,) = read(tmp_path)[0]
    assert doc.metadata["phones"] == ["0171 5550123", "+49305550987"]


V4 = (
    "BEGIN:VCARD\nVERSION:4.0\nUID:urn:uuid:a1\nFN:Anna Schmidt\nN:Schmidt;Anna;;;\n"
    "NICKNAME:Anni,Schmidti\nORG:Fernwerk GmbH;Backend\nTITLE:Lead\\, Platform\n"
    'TEL;VALUE=uri;TYPE="cell,voice":tel:+49-176-5550-1234\n'
    "EMAIL;TYPE=work:anna@fernwerk.io\n"
    "ADR;TYPE=home:;;Weserstra\xdfe 41\\, Hinterhaus;Berlin;;12045;Germany\n"
    "BDAY:--0612\nIMPP:xmpp:anna@jabber.example\n"
    "X-SOCIALPROFILE;TYPE=twitter;x-user=annaschmidt:https://twitter.com/annaschmidt\n"
    "URL:https://anna.example\nNOTE:Likes climbing\\; owes me a book\\nsecond line\n"
    "REV:20250102T101500Z\nEND:VCARD\n"
)


def test_vcard_40_fields(tmp_path):
    (tmp_path / "a.vcf").write_text(V4, encoding="utf-8")
    (doc,) = read(tmp_path)[0]
    assert doc.native_id == "urn:uuid:a1" and doc.title == "Anna Schmidt"
    assert doc.metadata["org"] == "Fernwerk GmbH, Backend"
    assert doc.metadata["birthday"] == "--06-12" and doc.metadata["nicknames"] == ["Anni", "Schmidti"]
    assert doc.metadata["phones"] == ["+4917655501234"]
    assert doc.metadata["handles"] == ["xmpp:anna@jabber.example", "twitter:annaschmidt"]
    assert doc.updated_at is not None and doc.updated_at.isoformat() == "2025-01-02T10:15:00+00:00"
    for line in (
        "Nickname: Anni, Schmidti",
        "Organisation: Fernwerk GmbH, Backend — Lead, Platform",
        "Phone (cell): +49-176-5550-1234 (+4917655501234)",
        "Address (home): Weserstraße 41, Hinterhaus, Berlin, 12045, Germany",
        "Note: Likes climbing; owes me a book\nsecond line",
        "Website: https://anna.example",
    ):
        assert line in doc.text, line
    assert contacts.identities(doc.metadata) == {
        "anna@fernwerk.io",
        "+4917655501234",
        "xmpp:anna@jabber.example",
        "twitter:annaschmidt",
    }


def test_identities_normalise():
    meta = {"emails": [" A@B.de "], "phones": ["+4930123456", "(905) 555-1234"], "handles": ["Skype:Foo"]}
    assert contacts.identities(meta) == {"a@b.de", "+4930123456", "9055551234", "skype:foo"}
    assert contacts.identities({}) == set()


def test_apple_grouped_labels_and_year_less_birthday(tmp_path):
    card = (
        "BEGIN:VCARD\r\nVERSION:3.0\r\nN:Ng;Lee;;;\r\nFN:Lee Ng\r\n"
        "item1.TEL;type=pref:+1 415 555 0100\r\nitem1.X-ABLabel:_$!<Mobile>!$_\r\n"
        "item2.EMAIL;type=INTERNET:lee@example.com\r\nitem2.X-ABLabel:Uni\r\n"
        "BDAY;value=date:1604-02-29\r\nEND:VCARD\r\n"
    )
    (tmp_path / "apple.vcf").write_text(card, encoding="utf-8")
    (doc,) = read(tmp_path)[0]
    assert "Phone (mobile): +1 415 555 0100" in doc.text
    assert "Email (uni): lee@example.com" in doc.text
    assert doc.metadata["birthday"] == "--02-29"


def test_malformed_card_is_reported_alone_and_the_rest_read(tmp_path):
    good = "BEGIN:VCARD\nVERSION:3.0\nFN:Good One\nEMAIL:g@x.org\nEND:VCARD\n"
    bad = "BEGIN:VCARD\nVERSION:3.0\nFN:Broken\nthis line has no colon\nEND:VCARD\n"
    empty = "BEGIN:VCARD\nVERSION:3.0\nEND:VCARD\n"
    cut = "BEGIN:VCARD\nVERSION:3.0\nFN:Cut Off\n"
    (tmp_path / "mixed.vcf").write_text(good + bad + empty + good.replace("Good One", "Also Good") + cut)
    docs, errors, _, _ = read(tmp_path)
    assert sorted(d.title for d in docs) == ["Also Good", "Good One"]
    uris = {e.uri.rsplit("#", 1)[1]: e.error for e in errors}
    assert set(uris) == {"2", "3", "5"}
    assert "no colon" in uris["2"] and "empty" in uris["3"] and "END:VCARD" in uris["5"]


def test_a_file_of_another_kind_is_one_error(tmp_path):
    (tmp_path / "notes.vcf").write_text("just some text\n")
    (tmp_path / "budget.csv").write_text("Date,Amount\n2025-01-01,3\n")
    (tmp_path / "binary.vcf").write_bytes(b"\x00\x01\x02" * 100)
    docs, errors, _, _ = read(tmp_path)
    assert not docs
    assert len(errors) == 3 and all("#" not in e.uri for e in errors)
    assert any("not a Google Contacts CSV" in e.error for e in errors)
    assert any("not a vCard" in e.error for e in errors)


def test_same_uid_across_files_kept_once_uidless_duplicates_kept(tmp_path):
    card = "BEGIN:VCARD\nVERSION:3.0\nUID:u-1\nFN:Same Person\nREV:{rev}\nNOTE:{note}\nEND:VCARD\n"
    (tmp_path / "a.vcf").write_text(card.format(rev="20240101T000000Z", note="old"))
    (tmp_path / "b.vcf").write_text(card.format(rev="20250101T000000Z", note="new"))
    plain = "BEGIN:VCARD\nVERSION:3.0\nFN:No Uid\nEMAIL:n@u.org\nEND:VCARD\n"
    (tmp_path / "c.vcf").write_text(plain)
    (tmp_path / "d.vcf").write_text(plain)
    docs, errors, _, _ = read(tmp_path)
    assert not errors
    same = [d for d in docs if d.title == "Same Person"]
    assert len(same) == 1 and "Note: new" in same[0].text
    assert len([d for d in docs if d.title == "No Uid"]) == 2


def test_incremental(tmp_path):
    a = tmp_path / "a.vcf"
    a.write_text("BEGIN:VCARD\nVERSION:3.0\nFN:Ann\nEMAIL:ann@x.org\nEND:VCARD\n")
    b = tmp_path / "b.vcf"
    b.write_text("BEGIN:VCARD\nVERSION:3.0\nFN:Bob\nEMAIL:bob@x.org\nEND:VCARD\n")
    docs, _, _, state = read(tmp_path)
    ids = {d.title: d.native_id for d in docs}
    docs2, _, seen2, state2 = read(tmp_path, state)
    assert not docs2 and {s.native_id for s in seen2} == set(ids.values())
    b.write_text(b.read_text() + "BEGIN:VCARD\nVERSION:3.0\nFN:Cy\nEMAIL:cy@x.org\nEND:VCARD\n")
    os.utime(b, ns=(b.stat().st_mtime_ns + 10**9,) * 2)
    docs3, _, seen3, state3 = read(tmp_path, state2)
    assert sorted(d.title for d in docs3) == ["Bob", "Cy"]
    assert {s.native_id for s in seen3} == {ids["Ann"]}
    assert next(d for d in docs3 if d.title == "Bob").native_id == ids["Bob"]
    a.unlink()
    docs4, _, seen4, _ = read(tmp_path, state3)
    assert ids["Ann"] not in {s.native_id for s in seen4} | {d.native_id for d in docs4}


def _people() -> list[Person]:
    return [
        Person(
            "Felix",
            "Hoffmann",
            emails=[("home", "felix.hoffmann@gmx.de")],
            phones=[("mobile", "0176 55501234")],
            address=("Am See 7", "Potsdam", "Brandenburg", "14469", "Deutschland"),
            birthday="1994-03-09",
            nickname="Fe",
            note="Bruder; mag Biergärten, sehr\nnette Leute",
            uid="F-1",
            handles=[("skype", "felix.h")],
        ),
        Person(
            "Camille",
            "Durand",
            emails=[("home", "camille.durand@orange.fr"), ("work", "c.durand@factoria.fr")],
            org="Factoria",
            title="Designer",
            birthday="--11-02",
        ),
    ]


@pytest.mark.parametrize("version", ["3.0", "4.0"])
def test_reads_what_the_evalset_writer_writes_as_vcard(tmp_path, version):
    (tmp_path / "book.vcf").write_bytes(vcard(_people(), version))
    docs, errors, _, _ = read(tmp_path, region="DE")
    assert not errors
    found = by_title(docs)
    felix, camille = found["Felix Hoffmann"], found["Camille Durand"]
    assert felix.native_id == "F-1"
    assert felix.metadata["phones"] == ["+4917655501234"] and felix.metadata["birthday"] == "1994-03-09"
    assert felix.metadata["handles"] == ["skype:felix.h"]
    assert "Note: Bruder; mag Biergärten, sehr\nnette Leute" in felix.text
    assert "Address (home): Am See 7, Potsdam, Brandenburg, 14469, Deutschland" in felix.text
    assert camille.metadata["emails"] == ["camille.durand@orange.fr", "c.durand@factoria.fr"]
    assert camille.metadata["birthday"] == "--11-02" and camille.metadata["org"] == "Factoria"


def test_reads_what_the_evalset_writer_writes_as_google_csv(tmp_path):
    (tmp_path / "contacts.csv").write_bytes(google_csv(_people()))
    docs, errors, _, _ = read(tmp_path, region="DE")
    assert not errors
    found = by_title(docs)
    felix = found["Felix Hoffmann"]
    assert felix.metadata["phones"] == ["+4917655501234"] and felix.metadata["emails"] == ["felix.hoffmann@gmx.de"]
    assert "Address (home): Am See 7, 14469 Potsdam, Deutschland" in felix.text
    assert found["Camille Durand"].metadata["emails"] == ["camille.durand@orange.fr", "c.durand@factoria.fr"]


OLD_CSV = (
    "Name,Given Name,Additional Name,Family Name,Nickname,Birthday,Notes,Group Membership,"
    "E-mail 1 - Type,E-mail 1 - Value,E-mail 2 - Type,E-mail 2 - Value,Phone 1 - Type,Phone 1 - Value,"
    "Address 1 - Type,Address 1 - Formatted,Organization 1 - Type,Organization 1 - Name,Organization 1 - Title,"
    "IM 1 - Type,IM 1 - Service,IM 1 - Value\r\n"
    'Wei Zhang,Wei,,Zhang,,1988-07-01,"met in Hangzhou, 2019",* myContacts,* Home,zhangwei1988@qq.com ::: wei@work.cn,,,'
    'Mobile,+86 138 0013 8000 ::: +86 571 8888 0000,Home,"1 Road\nHangzhou",,Alibaba,Engineer,Other,QQ,12345678\r\n'
    ",,,,,,,,,,,,,,,,,,,,,\r\n"
    "Broken,row,with,too,many,cells,,,,,,,,,,,,,,,,,,,,,,,,\r\n"
)


def test_old_google_csv_header_multi_values_and_bad_rows(tmp_path):
    (tmp_path / "google.csv").write_text(OLD_CSV, encoding="utf-8-sig")
    docs, errors, _, _ = read(tmp_path)
    (doc,) = docs
    assert doc.title == "Wei Zhang"
    assert doc.metadata["emails"] == ["zhangwei1988@qq.com", "wei@work.cn"]
    assert doc.metadata["phones"] == ["+8613800138000", "+8657188880000"]
    assert doc.metadata["handles"] == ["qq:12345678"] and doc.metadata["org"] == "Alibaba"
    assert "Address (home): 1 Road, Hangzhou" in doc.text and "Organisation: Alibaba — Engineer" in doc.text
    (error,) = errors
    assert error.uri.endswith("google.csv#4") and "cells" in error.error


def _abcddb(path: Path) -> None:
    """A database with the tables and columns macOS Contacts writes (a subset of each)."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE ZABCDRECORD (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZFIRSTNAME VARCHAR,
          ZLASTNAME VARCHAR, ZMIDDLENAME VARCHAR, ZNICKNAME VARCHAR, ZORGANIZATION VARCHAR,
          ZJOBTITLE VARCHAR, ZDEPARTMENT VARCHAR, ZBIRTHDAY TIMESTAMP, ZUNIQUEID VARCHAR,
          ZMODIFICATIONDATE TIMESTAMP, ZNAME VARCHAR);
        CREATE TABLE ZABCDEMAILADDRESS (Z_PK INTEGER PRIMARY KEY, ZOWNER INTEGER, ZADDRESS VARCHAR,
          ZLABEL VARCHAR, ZORDERINGINDEX INTEGER);
        CREATE TABLE ZABCDPHONENUMBER (Z_PK INTEGER PRIMARY KEY, ZOWNER INTEGER, ZFULLNUMBER VARCHAR,
          ZLABEL VARCHAR, ZORDERINGINDEX INTEGER);
        CREATE TABLE ZABCDPOSTALADDRESS (Z_PK INTEGER PRIMARY KEY, ZOWNER INTEGER, ZSTREET VARCHAR,
          ZCITY VARCHAR, ZSTATE VARCHAR, ZZIPCODE VARCHAR, ZCOUNTRYNAME VARCHAR, ZLABEL VARCHAR);
        CREATE TABLE ZABCDNOTE (Z_PK INTEGER PRIMARY KEY, ZCONTACT INTEGER, ZTEXT VARCHAR);
        CREATE TABLE ZABCDSOCIALPROFILE (Z_PK INTEGER PRIMARY KEY, ZOWNER INTEGER, ZSERVICENAME VARCHAR,
          ZUSERNAME VARCHAR, ZURLSTRING VARCHAR);
        INSERT INTO ZABCDRECORD VALUES (1, 19, 'Sabine', 'Hoffmann', NULL, 'Mama', NULL, NULL, NULL,
          -1104537600, 'AB-1:ABPerson', 757382400, NULL);
        INSERT INTO ZABCDRECORD VALUES (2, 19, NULL, NULL, NULL, NULL, 'Hausverwaltung Baumann', NULL, NULL,
          NULL, 'AB-2:ABPerson', NULL, NULL);
        INSERT INTO ZABCDRECORD VALUES (3, 17, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'G-1:ABGroup',
          NULL, 'Family');
        INSERT INTO ZABCDEMAILADDRESS VALUES (1, 1, 'Sabine.Hoffmann@t-online.de', '_$!<Home>!$_', 0);
        INSERT INTO ZABCDPHONENUMBER VALUES (1, 1, '0171 55509876', '_$!<Mobile>!$_', 0);
        INSERT INTO ZABCDPHONENUMBER VALUES (2, 2, '+49 30 5550441', '_$!<Work>!$_', 0);
        INSERT INTO ZABCDPOSTALADDRESS VALUES (1, 1, 'Am Heiligen See 7', 'Potsdam', NULL, '14469',
          'Deutschland', '_$!<Home>!$_');
        INSERT INTO ZABCDNOTE VALUES (1, 1, 'Birthday party on the 14th');
        INSERT INTO ZABCDSOCIALPROFILE VALUES (1, 1, 'Facebook', 'sabine.h', NULL);
        """
    )
    conn.commit()
    conn.close()


def test_addressbook_database(tmp_path):
    db = tmp_path / "AddressBook-v22.abcddb"
    _abcddb(db)
    docs, errors, _, _ = read(tmp_path, region="DE")
    assert not errors
    found = by_title(docs)
    assert set(found) == {"Sabine Hoffmann", "Hausverwaltung Baumann"}  # the group is not a contact
    sabine = found["Sabine Hoffmann"]
    assert sabine.native_id == "AB-1:ABPerson"
    assert sabine.metadata["emails"] == ["sabine.hoffmann@t-online.de"]
    assert sabine.metadata["phones"] == ["+4917155509876"]
    assert sabine.metadata["birthday"] == "1966-01-01"
    assert sabine.metadata["handles"] == ["facebook:sabine.h"]
    assert "Address (home): Am Heiligen See 7, Potsdam, 14469, Deutschland" in sabine.text
    assert "Note: Birthday party on the 14th" in sabine.text and "Nickname: Mama" in sabine.text
    assert sabine.updated_at is not None and sabine.updated_at.year == 2025
    assert not any(p.name.endswith(("-shm", "-journal")) for p in tmp_path.iterdir())  # opened read-only


def test_a_database_without_the_tables_is_one_error(tmp_path):
    conn = sqlite3.connect(tmp_path / "AddressBook-v22.abcddb")
    conn.execute("CREATE TABLE other (x)")
    conn.close()
    docs, errors, _, _ = read(tmp_path)
    assert not docs and len(errors) == 1 and "ZABCDRECORD" in errors[0].error


def test_discover_finds_the_root_and_each_account(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    root = tmp_path / "Library" / "Application Support" / "AddressBook"
    (root / "Sources" / "ABC").mkdir(parents=True)
    _abcddb(root / "AddressBook-v22.abcddb")
    _abcddb(root / "Sources" / "ABC" / "AddressBook-v22.abcddb")
    found, looked = contacts.discover()
    assert found == [root / "AddressBook-v22.abcddb", root / "Sources" / "ABC" / "AddressBook-v22.abcddb"]
    assert str(root / "Sources") in looked
    docs = [i for i in contacts.read(None, "c", None) if isinstance(i, Document)]
    assert len({d.native_id for d in docs}) == 2  # the same records in both: one each


def test_one_chunk_per_contact():
    (doc,) = [i for i in contacts.read(PUBLIC / "ez-vcard", "c", None) if isinstance(i, Document)][:1]
    spans = contacts.spans(doc, lambda t: len(t.split()), 512)
    assert len(spans) == 1


def test_public_corpus_reads_with_no_failed_source():
    docs, errors, _, _ = read(PUBLIC)
    assert len(docs) > 1000
    assert all(d.title for d in docs)
    assert len(errors) <= 4  # the cropped, empty and photo-only cards, each named


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("MultiAnsiFilterTests__German.vcf", "Sören Täve Nüßlebaum"),
        ("MultiAnsiFilterTests__Greek.vcf", "Βαγγέλης"),
        ("MultiAnsiFilterTests__Ukrainian.vcf", "Віталій Володимирович Кличко"),
        ("MultiAnsiFilterTests__v3Utf16Bom.vcf", "Folker Kinzel"),
    ],
)
def test_legacy_code_pages_and_utf16(name, title):
    """Windows code pages without a BOM (Outlook's exports) and UTF-16 with one."""
    docs = [i for i in contacts.read(PUBLIC / "VCards" / name, "c", None) if isinstance(i, Document)]
    assert title in [d.title for d in docs]


def test_daily_schedule():
    assert contacts.SCHEDULE.split()[1:] == ["4", "*", "*", "*"]
