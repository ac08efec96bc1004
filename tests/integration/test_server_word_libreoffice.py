"""`mcpbox mcp word` against LibreOffice Writer, both ways.

(a) Documents written by LibreOffice (`soffice --headless --convert-to docx` of a
python-docx document and of a flat ODT text) are read by the read tools exactly as
python-docx - what upstream runs - reads them: text, outline (styles, tables),
info, paragraph text, search.

(b) convert_to_pdf runs LibreOffice inside the server, as upstream does, and the PDF
holds the document's text.

Every soffice run here has a private profile and a time limit; the module is skipped
only when LibreOffice Writer is not installed (scripts/install-deps --test)."""
import json
import os
import shutil
import subprocess

import pytest

from mcp_stdio import StdioClient
from test_server_word import python_docx_sample, server, root, wd  # noqa: F401 (fixtures)

docx = pytest.importorskip("docx")

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
pytestmark = pytest.mark.skipif(
    not SOFFICE or not (os.path.exists("/usr/lib/libreoffice/program/libswlo.so") or
                        os.path.exists("/usr/lib/libreoffice/program/swriter")),
    reason="LibreOffice Writer not installed")

FODT = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">
 <office:body><office:text>
  <text:h text:outline-level="1">Writer heading</text:h>
  <text:p>A paragraph with <text:span>spans</text:span> and a<text:tab/>tab.</text:p>
  <text:p>Line one<text:line-break/>line two \u00e9</text:p>
  <table:table table:name="T1"><table:table-column table:number-columns-repeated="2"/>
   <table:table-row><table:table-cell><text:p>a1</text:p></table:table-cell>
    <table:table-cell><text:p>b1</text:p></table:table-cell></table:table-row>
   <table:table-row><table:table-cell table:number-columns-spanned="2"><text:p>merged</text:p></table:table-cell>
    <table:covered-table-cell/></table:table-row>
  </table:table>
  <text:h text:outline-level="2">Second heading</text:h>
 </office:text></office:body>
</office:document>
"""


def soffice_docx(src, outdir, tmp_path):
    profile = tmp_path / "lo-profile"
    subprocess.run([SOFFICE, "-env:UserInstallation=file://%s" % profile, "--headless",
                    "--convert-to", "docx:MS Word 2007 XML", "--outdir", str(outdir), str(src)],
                   check=True, capture_output=True, timeout=120,
                   env=dict(os.environ, HOME=str(tmp_path)))


def test_word_reads_libreoffice_files(wd, root, tmp_path):  # noqa: F811
    python_docx_sample(tmp_path / "pd.docx")
    (tmp_path / "w.fodt").write_text(FODT, encoding="utf-8")
    soffice_docx(tmp_path / "pd.docx", root, tmp_path)
    soffice_docx(tmp_path / "w.fodt", root, tmp_path)
    for name in ("pd", "w"):
        d = docx.Document(str(root / (name + ".docx")))
        want = [p.text for p in d.paragraphs]
        for t in d.tables:
            for row in t.rows:
                for cell in row.cells:
                    want.extend(p.text for p in cell.paragraphs)
        assert wd("get_document_text", {"filename": name}) == "\n".join(want)
        outline = json.loads(wd("get_document_outline", {"filename": name}))
        assert [(p["text"], p["style"]) for p in outline["paragraphs"]] == [
            (p.text[:100] + ("..." if len(p.text) > 100 else ""), p.style.name if p.style else "Normal")
            for p in d.paragraphs]
        assert [(t["rows"], t["columns"]) for t in outline["tables"]] == [
            (len(t.rows), len(t.columns)) for t in d.tables]
        info = json.loads(wd("get_document_info", {"filename": name}))
        assert (info["paragraph_count"], info["table_count"]) == (len(d.paragraphs), len(d.tables))
        assert info["word_count"] == sum(len(p.text.split()) for p in d.paragraphs)
        for i, p in enumerate(d.paragraphs):
            got = json.loads(wd("get_paragraph_text_from_document", {"filename": name, "paragraph_index": i}))
            assert (got["text"], got["style"]) == (p.text, p.style.name if p.style else "Normal")
    w = docx.Document(str(root / "w.docx"))
    assert w.paragraphs[0].text == "Writer heading" and "Heading 1" in w.paragraphs[0].style.name
    found = json.loads(wd("find_text_in_document", {"filename": "w", "text_to_find": "merged"}))
    assert found["total_count"] == 2  # the spanned cell, seen once per grid column


# ------------------------------------------------------------------- pdf

def test_word_convert_to_pdf(wd, root):
    wd("create_document", {"filename": "p"})
    wd("add_paragraph", {"filename": "p", "text": "PDF body text"})
    text = wd("convert_to_pdf", {"filename": "p", "output_filename": "out/p2"})
    assert text == "Document successfully converted to PDF via libreoffice: %s/out/p2.pdf" % root
    pdf = (root / "out" / "p2.pdf").read_bytes()
    assert pdf.startswith(b"%PDF")
    pypdf = pytest.importorskip("pypdf")
    assert "PDF body text" in pypdf.PdfReader(str(root / "out" / "p2.pdf")).pages[0].extract_text()




def test_word_written_files_open_in_libreoffice(wd, root, tmp_path):  # noqa: F811
    """What the write tools make, LibreOffice opens: its text export has every piece."""
    from test_server_word import png_bytes
    (root / "i.png").write_bytes(png_bytes(8, 8))
    wd("create_document", {"filename": "lo", "title": "T"})
    wd("add_heading", {"filename": "lo", "text": "LO heading", "level": 1, "border_bottom": True})
    wd("add_paragraph", {"filename": "lo", "text": "Body\ttext", "bold": True, "color": "FF0000"})
    wd("add_table", {"filename": "lo", "rows": 2, "cols": 2, "data": [["c1", "c2"], ["c3", "c4"]]})
    wd("merge_table_cells_horizontal", {"filename": "lo", "table_index": 0, "row_index": 1, "start_col": 0,
                                        "end_col": 1})
    wd("set_table_cell_shading", {"filename": "lo", "table_index": 0, "row_index": 0, "col_index": 0,
                                  "fill_color": "D9D9D9"})
    wd("add_picture", {"filename": "lo", "image_path": "i.png", "width": 1})
    wd("add_footnote_enhanced", {"filename": "lo", "paragraph_index": 1, "footnote_text": "A real note"})
    wd("insert_numbered_list_near_text", {"filename": "lo", "target_text": "Body", "list_items": ["item x"]})
    wd("add_page_break", {"filename": "lo"})
    wd("add_paragraph", {"filename": "lo", "text": "After the break"})
    subprocess.run([SOFFICE, "-env:UserInstallation=file://%s" % (tmp_path / "p"), "--headless",
                    "--convert-to", "txt:Text (encoded):UTF8", "--outdir", str(tmp_path), str(root / "lo.docx")],
                   check=True, capture_output=True, timeout=120, env=dict(os.environ, HOME=str(tmp_path)))
    text = (tmp_path / "lo.txt").read_text(encoding="utf-8-sig")
    for piece in ("LO heading", "c1", "c4", "item x", "After the break"):
        assert piece in text, (piece, text)
    # the footnote is a real one to LibreOffice: numbered at its reference (the text
    # export leaves the note's body out)
    assert "Body\ttext1" in text
