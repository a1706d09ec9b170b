"""What a message's text is: the user's words, a media placeholder, a deleted message's notice, or
a line the app wrote (the encryption notice, members added, calls), in the languages WhatsApp
exports in.

Two marks are language-independent: iOS starts what the app wrote with a left-to-right mark
(U+200E: "‎image omitted", "‎<attached: …>", "‎Anna added Bob"), and Android writes its events
without a sender ("Anna added Bob"). The rest are phrases, listed per language (English, German,
Spanish, French, Italian, Portuguese, Dutch, Russian, Turkish, Indonesian, Polish); a phrase in
another language reads as the user's text, never as a lost message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragbag.connectors.whatsapp.lines import MARKS

LRM = "\u200e"
TEXT, MEDIA, DELETED, SYSTEM = "text", "media", "deleted", "system"
_MARK = re.compile(f"[{MARKS}]")


@dataclass
class Body:
    kind: str  # TEXT, MEDIA (text holds the [media: …] marker), DELETED or SYSTEM
    text: str
    mine: bool = False  # "You deleted this message": its sender is the exporting user


def _words(*phrases: str) -> re.Pattern[str]:
    return re.compile("|".join(phrases), re.I)


# "This message was deleted" (someone's) and "You deleted this message" (mine), whole lines.
_DELETED = _words(
    r"this message was deleted",
    r"diese nachricht wurde gelöscht",
    r"se eliminó este mensaje",
    r"este mensaje fue eliminado",
    r"ce message a été supprimé",
    r"questo messaggio è stato eliminato",
    r"esta mensagem foi apagada",
    r"mensagem apagada",
    r"dit bericht is verwijderd",
    r"это сообщение удалено",
    r"bu mesaj silindi",
    r"pesan ini telah dihapus",
    r"ta wiadomość została usunięta",
    r"waiting for this message\. this may take a while",
    r"warte auf diese nachricht\. dies kann etwas dauern",
    r"esperando este mensaje\. esto puede tomar un tiempo",
)
_DELETED_MINE = _words(
    r"you deleted this message",
    r"du hast diese nachricht gelöscht",
    r"eliminaste este mensaje",
    r"vous avez supprimé ce message",
    r"hai eliminato questo messaggio",
    r"você apagou esta mensagem",
    r"apagaste esta mensagem",
    r"je hebt dit bericht verwijderd",
    r"вы удалили это сообщение",
    r"bu mesajı sildiniz",
    r"anda menghapus pesan ini",
    r"usunięto tę wiadomość",
)
# "<This message was edited>" at a message's end: the message stays, the notice goes.
_EDITED = re.compile(
    r"<[^<>\n]{0,30}"
    r"(?:edited|bearbeitet|edit[óo]|editad[oa]|modifi[ée]|modificato|bewerkt|отредактировано|düzenlendi|diedit|edytowan)"
    r"[^<>\n]{0,30}>\s*\Z",
    re.I,
)
_OMIT = (
    r"omitted|omitid[oa]s?|ausgeschlossen|weggelassen|weggelaten|omis|omise|absente?|omess[oaie]|"
    r"ocultad[oa]|oculta|oculto|пропущено|опущено|без медиафайлов|dihilangkan|dahil edilmedi|atlandı|pominięt[oay]"
)
# iOS, "include media": "‎<attached: 00000012-PHOTO-2023-12-31-21-41-05.jpg>" (and localised).
_ATTACHED = re.compile(
    r"<(?:attached|anhang|adjunto|anexo|allegato|pièce jointe|fichier joint|bijlage|вложение|ek|lampiran|załącznik)"
    r"\s?:\s*(?P<file>[^<>\n]+?)\s*>",
    re.I,
)
# Android, "include media": "IMG-20231231-WA0001.jpg (file attached)" on the first line.
_FILE_ATTACHED = re.compile(
    r"\A(?P<file>[^\n]{1,200}?\.\w{1,6}) \((?:file attached|datei angehängt|archivo adjunto|fichier joint|"
    r"file allegato|arquivo anexado|ficheiro anexado|bestand bijgevoegd|файл прикреплен|файл прикреплён|dosya ekli|"
    r"file terlampir|załączono plik)\)",
    re.I,
)
# Android, "without media": "<Media omitted>", "<Medien ausgeschlossen>", "<Multimedia omitido>".
_MEDIA_OMITTED = re.compile(rf"\A<[^<>\n]{{0,30}}(?:{_OMIT})[^<>\n]{{0,30}}>\Z", re.I)
# iOS, "without media": "‎image omitted", "Report.pdf • ‎3 pages ‎document omitted", "‎Bild
# weggelassen", "‎imagen omitida": the kind's word(s) after the app's mark, at the end.
_KIND_OMITTED = re.compile(rf"{LRM}(?P<kind>[^\W\d_]+(?: [^\W\d_]+)?) (?:{_OMIT})\s*\Z", re.I)
# The same without the mark (an export passed through a tool that drops it): known kinds only,
# so "Details omitted" stays text.
_KNOWN_OMITTED = re.compile(
    r"\A(?P<kind>image|video|audio|sticker|GIF|document|contact card|photo|bild|dokument|kontaktkarte|imagen|"
    r"documento|tarjeta de contacto|vídeo|immagine|imagem|áudio|figurinha|afbeelding|foto|изображение|видео|аудио|"
    rf"стикер|görüntü|gambar|zdjęcie) (?:{_OMIT})\s*\Z",
    re.I,
)
# App-marked lines that are the user's content: a shared place, a poll.
_CONTENT = re.compile(
    r"\A(?:location|live location|standort|ubicación|localização|posizione|position|locatie|местоположение|konum|"
    r"lokasi|lokalizacja|poll|umfrage|encuesta|sondage|sondaggio|enquete|peiling|опрос|anket|polling|ankieta)\b",
    re.I,
)
_ENCRYPTION = re.compile(
    r"\A(?:messages|calls|nachrichten|los mensajes|mensajes|les messages|i messaggi|as mensagens|mensagens|"
    r"berichten|сообщения|mesajlar|pesan|wiadomości)\b.{0,80}"
    r"(?:end-to-end|ende-zu-ende|extremo a extremo|bout en bout|ponta a ponta|сквозным|uçtan uca)",
    re.I | re.S,
)
# Events only a group has: it was created, members joined, were added or left, its subject,
# icon or description changed.
_GROUP = re.compile(
    r"created group|created this group|\badded\b|joined using this group|\bleft\Z|\bremoved\b|changed the subject|"
    r"changed this group|changed the group|group description|"
    r"hat die gruppe|gruppe .{0,80}erstellt|hinzugefügt|hat die gruppe verlassen|ist beigetreten|gruppenbeschreibung|"
    r"gruppenbild|creó el grupo|añadió|se unió|cambió el asunto|a créé le groupe|a ajouté|ha creato il gruppo|"
    r"ha aggiunto|criou o grupo|adicionou|heeft groep|heeft de groep|toegevoegd|создал\w* групп|добавил|"
    r"grubu oluşturdu|ekledi|membuat grup|menambahkan|utworzył\w* grupę|dodał",
    re.I,
)
# "Anna created group “Trip”": the group's name, for a chat whose file does not name it.
_CREATED_NAME = re.compile(
    r"(?:created group|hat die gruppe|creó el grupo|a créé le groupe|ha creato il gruppo|"
    r"criou o grupo|heeft groep|создал\w* группу)\s*[\"“„«'](?P<name>[^\"”“»'\n]+)[\"”“»']",
    re.I,
)


def classify(body: str, has_sender: bool) -> Body:
    """What a message's text (its first line's rest and its continuation lines) is."""
    if not has_sender:
        return Body(SYSTEM, _clean(body))  # Android: the app's events have no sender
    app = body.lstrip(" \t").startswith(LRM)
    body = _without_edited(body)
    text = _clean(body)
    whole = text.strip().rstrip(".").strip()
    if _DELETED_MINE.fullmatch(whole):
        return Body(DELETED, "", mine=True)
    if _DELETED.fullmatch(whole):
        return Body(DELETED, "")
    media = _media(body, text)
    if media is not None:
        return Body(MEDIA, media)
    if _ENCRYPTION.match(whole) or (app and not _CONTENT.match(text.strip())):
        return Body(SYSTEM, text)
    return Body(TEXT, text)


def _without_edited(body: str) -> str:
    """The body less an edit notice at its end. Only the end is searched: the notice is short,
    and a search of the whole body would be quadratic in a long run of spaces."""
    tail = body[-160:]
    m = _EDITED.search(tail)
    if m is None:
        return body
    return body[: len(body) - len(tail) + m.start()].rstrip(" \t" + MARKS)


def _media(raw: str, text: str) -> str | None:
    """The ``[media: …]`` line a media message becomes (its caption kept after it), or None."""
    first, _, more = text.partition("\n")
    m = _ATTACHED.search(text)
    if m:
        caption = (text[: m.start()] + text[m.end() :]).strip()
        return _marker(m["file"].strip(), caption)
    m = _FILE_ATTACHED.match(text)
    if m:
        return _marker(m["file"].strip(), (first[m.end() :] + "\n" + more).strip())
    if _MEDIA_OMITTED.match(text.strip()):
        return "[media]"
    m = _KNOWN_OMITTED.match(text.strip())
    if m:
        return _marker(m["kind"], "")
    last = raw.rstrip().rsplit("\n", 1)[-1]
    m = _KIND_OMITTED.search(last)
    if m:
        head = raw.rstrip()[: len(raw.rstrip()) - len(last) + m.start()]
        return _marker(m["kind"].strip(), _clean(head).strip().rstrip("•").strip())
    return None


def _marker(what: str, caption: str) -> str:
    return f"[media: {what}]" + (f" {caption}" if caption else "")


def _clean(text: str) -> str:
    """The text without direction marks (invisible; iOS scatters them), its lines right-trimmed."""
    return "\n".join(line.rstrip() for line in _MARK.sub("", text).split("\n")).strip("\n")


def group_event(text: str) -> bool:
    """Whether an app-written line is an event only group chats have."""
    return bool(_GROUP.search(text))


def encryption_notice(text: str) -> bool:
    return bool(_ENCRYPTION.match(text.strip()))


def created_name(text: str) -> str:
    """The group name a "created group “…”" line gives, else ""."""
    m = _CREATED_NAME.search(text)
    return m["name"].strip() if m else ""
