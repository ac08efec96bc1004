"""P7P powerpoint presentations: the powerpoint server (office-powerpoint-mcp-server
2.0.6) of an acquired Toolathlon sandbox, through the daemon's gateway:

  - open_presentation + extract_presentation_text of a 100-slide .pptx (a title and a
    five-line body per slide, a 4 x 4 table on every tenth);
  - writing: create_presentation, add_slide, 200 manage_text "add" calls (200 text
    boxes of one paragraph each), one add_table of 50 x 10 cells with data, then
    save_presentation (upstream keeps presentations in memory until saved; so does
    the server);
  - the powerpoint server's peak RSS (VmHWM).

The alternative: python-pptx is not packaged for Debian and PyPI is not reachable,
so the floor for upstream is python-pptx's own engine doing the same work in one
Python process: zipfile + lxml (Debian's python3-lxml) parsing every slide part and
walking its shapes for the text; building the text boxes and the table as lxml
elements and writing the package. No MCP, HTTP, sandbox or python-pptx object
layer around it.

Checks: the text read holds every slide's title and body; the written deck has 2
slides' worth of shapes (201 on the slide), a 50 x 10 table and its last cell's
text (extract_slide_text / the alternative's own re-read). --smoke uses 20 slides,
20 writes and a 10 x 10 table."""
import io
import json
import os
import re
import sys
import time
import zipfile

from p7_driver import alternative, doc_rows, in_sandbox, measure, table_data
from p7_office import timed_call

TEMPLATE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "src", "servers", "powerpoint", "default.pptx")
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
NS = 'xmlns:a="%s" xmlns:r="%s" xmlns:p="%s"' % (A, R, P)


def sizes(ctx):
    """(slides of the big deck, text boxes written, table rows, table cols)."""
    if ctx.smoke:
        return 20, 20, 10, 10
    return 100, 200, 50, 10


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def sp(i, name, ph, x, y, cx, cy, paras):
    ps = "".join("<a:p><a:r><a:rPr lang=\"en-US\"/><a:t>%s</a:t></a:r></a:p>" % esc(t) for t in paras)
    return ('<p:sp><p:nvSpPr><p:cNvPr id="%d" name="%s"/><p:cNvSpPr/><p:nvPr>%s</p:nvPr></p:nvSpPr>'
            '<p:spPr><a:xfrm><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></a:xfrm></p:spPr>'
            '<p:txBody><a:bodyPr/><a:lstStyle/>%s</p:txBody></p:sp>' % (i, name, ph, x, y, cx, cy, ps))


def table(i, rows, cols):
    grid = "".join('<a:gridCol w="%d"/>' % (8229600 // cols) for _ in range(cols))
    trs = "".join('<a:tr h="370840">%s</a:tr>' % "".join(
        '<a:tc><a:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:t>t%d.%d</a:t></a:r></a:p></a:txBody><a:tcPr/></a:tc>'
        % (r, c) for c in range(cols)) for r in range(rows))
    return ('<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="%d" name="Table %d"/><p:cNvGraphicFramePr>'
            '<a:graphicFrameLocks noGrp="1"/></p:cNvGraphicFramePr><p:nvPr/></p:nvGraphicFramePr>'
            '<p:xfrm><a:off x="457200" y="4800600"/><a:ext cx="8229600" cy="1483360"/></p:xfrm><a:graphic>'
            '<a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl><a:tblPr firstRow="1" '
            'bandRow="1"/><a:tblGrid>%s</a:tblGrid>%s</a:tbl></a:graphicData></a:graphic></p:graphicFrame>'
            % (i, i - 1, grid, trs))


def slide_text(n):
    title = "Slide %d: quarterly review of the northern region" % (n + 1)
    body = ["Point %d.%d: revenue grew while costs stayed flat across the period" % (n + 1, k) for k in range(5)]
    return title, body


def big_pptx(slides):
    """A deck on python-pptx's default template (the server's default.pptx), written
    with zipfile: slides of layout 2 (Title and Content)."""
    src = zipfile.ZipFile(TEMPLATE)
    out = io.BytesIO()
    z = zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED)
    ct = src.read("[Content_Types].xml").decode()
    pres = src.read("ppt/presentation.xml").decode()
    prels = src.read("ppt/_rels/presentation.xml.rels").decode()
    overrides, ids, rels = [], [], []
    for n in range(slides):
        title, body = slide_text(n)
        shapes = sp(2, "Title 1", '<p:ph type="title"/>', 457200, 274638, 8229600, 1143000, [title])
        shapes += sp(3, "Content Placeholder 2", '<p:ph idx="1"/>', 457200, 1600200, 8229600, 3000000, body)
        if n % 10 == 9:
            shapes += table(4, 4, 4)
        xml = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<p:sld %s><p:cSld><p:spTree>'
               '<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>'
               '%s</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>' % (NS, shapes))
        z.writestr("ppt/slides/slide%d.xml" % (n + 1), xml)
        z.writestr("ppt/slides/_rels/slide%d.xml.rels" % (n + 1),
                   '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://'
                   'schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="'
                   'http://schemas.openxmlformats.org/officeDocument/2006/relationships/slideLayout" '
                   'Target="../slideLayouts/slideLayout2.xml"/></Relationships>')
        overrides.append('<Override PartName="/ppt/slides/slide%d.xml" ContentType="application/vnd.'
                         'openxmlformats-officedocument.presentationml.slide+xml"/>' % (n + 1))
        ids.append('<p:sldId id="%d" r:id="rIdS%d"/>' % (256 + n, n + 1))
        rels.append('<Relationship Id="rIdS%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                    'relationships/slide" Target="slides/slide%d.xml"/>' % (n + 1, n + 1))
    ct = ct.replace("</Types>", "".join(overrides) + "</Types>")
    pres = pres.replace("</p:sldMasterIdLst>", "</p:sldMasterIdLst><p:sldIdLst>%s</p:sldIdLst>" % "".join(ids))
    prels = prels.replace("</Relationships>", "".join(rels) + "</Relationships>")
    for item in src.infolist():
        name = item.filename
        data = {"[Content_Types].xml": ct.encode(), "ppt/presentation.xml": pres.encode(),
                "ppt/_rels/presentation.xml.rels": prels.encode()}.get(name) or src.read(name)
        z.writestr(name, data)
    z.close()
    return out.getvalue()


def pp_side(ctx, d, sid, url, slides, writes, rows, cols):
    def read(s, i):
        ms, _ = timed_call(s, "open_presentation", {"file_path": "big.pptx", "id": "big%d" % i})
        ms2, text = timed_call(s, "extract_presentation_text", {"presentation_id": "big%d" % i})
        got = json.loads(text)
        all_text = got["all_presentation_text_combined"]
        errors = got["total_slides"] != slides
        errors += any(slide_text(n)[0] not in all_text or slide_text(n)[1][4] not in all_text
                      for n in range(slides))
        return ms + ms2, errors

    def write(s, i):
        pid_ = "w%d" % i
        total, _ = timed_call(s, "create_presentation", {"id": pid_})
        ms, _ = timed_call(s, "add_slide", {"layout_index": 6, "presentation_id": pid_})
        total += ms
        for k in range(writes):
            ms, _ = timed_call(s, "manage_text", {"slide_index": 0, "operation": "add", "presentation_id": pid_,
                                                  "text": "Written paragraph %d" % k, "left": 0.5,
                                                  "top": 0.5 + (k % 20) * 0.3, "width": 4, "height": 0.3})
            total += ms
        ms, _ = timed_call(s, "add_table", {"slide_index": 0, "rows": rows, "cols": cols, "left": 5,
                                            "top": 0.5, "width": 4.5, "height": 6.5,
                                            "data": table_data(rows, cols), "presentation_id": pid_})
        total += ms
        ms, _ = timed_call(s, "save_presentation", {"file_path": "w%d.pptx" % i, "presentation_id": pid_})
        return total + ms

    def check(s):
        _, text = timed_call(s, "extract_slide_text", {"slide_index": 0, "presentation_id": "w%d" % ctx.runs})
        got = json.loads(text)
        errors = not got.get("success")
        combined = got["text_content"]["all_text_combined"]
        errors += "Written paragraph %d" % (writes - 1) not in combined
        return errors + ("r%dc%d" % (rows - 1, cols - 1) not in combined)

    return measure(ctx, d, sid, url, "powerpoint", read, write, check)


def alt_read(path):
    """python-pptx's reading work: the package, presentation.xml, each slide part in
    sldIdLst order parsed with lxml, every shape's text frames and table cells."""
    from lxml import etree
    z = zipfile.ZipFile(path)
    pres = etree.fromstring(z.read("ppt/presentation.xml"))
    rels = etree.fromstring(z.read("ppt/_rels/presentation.xml.rels"))
    target = {r.get("Id"): r.get("Target") for r in rels}
    texts = []
    for sid in pres.iter("{%s}sldId" % P):
        part = "ppt/" + target[sid.get("{%s}id" % R)]
        sld = etree.fromstring(z.read(part))
        for shape in sld.find("{%s}cSld/{%s}spTree" % (P, P)):
            for tx in shape.iter("{%s}txBody" % P, "{%s}txBody" % A):
                paras = ["".join(t.text or "" for t in p.iter("{%s}t" % A)) for p in tx.iter("{%s}p" % A)]
                t = "\n".join(paras).strip()
                if t:
                    texts.append(t)
    return "\n".join(texts)


def alt_write(path, writes, rows, cols):
    """python-pptx's writing work: the template package, a slide part, 200 text boxes
    and a table built as lxml elements, the package written back."""
    from lxml import etree
    src = zipfile.ZipFile(TEMPLATE)
    parts = {i.filename: src.read(i.filename) for i in src.infolist()}
    sld = etree.fromstring(('<p:sld %s><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/>'
                            '<p:nvPr/></p:nvGrpSpPr><p:grpSpPr/></p:spTree></p:cSld><p:clrMapOvr>'
                            '<a:masterClrMapping/></p:clrMapOvr></p:sld>' % NS).encode())
    tree = sld.find("{%s}cSld/{%s}spTree" % (P, P))
    for k in range(writes):
        tree.append(etree.fromstring(sp(k + 2, "TextBox %d" % (k + 1), "", 457200, 457200 + (k % 20) * 274320,
                                        3657600, 274320, ["Written paragraph %d" % k])
                                     .replace("<p:sp>", "<p:sp %s>" % NS, 1).encode()))
    tb = etree.fromstring(table(writes + 2, 1, cols).replace("<p:graphicFrame>", "<p:graphicFrame %s>" % NS, 1)
                          .encode())
    tbl = tb.find(".//{%s}tbl" % A)
    for tr in tbl.findall("{%s}tr" % A):
        tbl.remove(tr)
    for r, row in enumerate(table_data(rows, cols)):
        tr = etree.SubElement(tbl, "{%s}tr" % A, h="100000")
        for v in row:
            tc = etree.SubElement(tr, "{%s}tc" % A)
            body = etree.SubElement(tc, "{%s}txBody" % A)
            etree.SubElement(body, "{%s}bodyPr" % A)
            etree.SubElement(body, "{%s}lstStyle" % A)
            run = etree.SubElement(etree.SubElement(body, "{%s}p" % A), "{%s}r" % A)
            etree.SubElement(run, "{%s}t" % A).text = v
            etree.SubElement(tc, "{%s}tcPr" % A)
    tree.append(tb)
    parts["ppt/slides/slide1.xml"] = etree.tostring(sld, xml_declaration=True, encoding="UTF-8", standalone=True)
    parts["ppt/slides/_rels/slide1.xml.rels"] = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.'
        b'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.'
        b'openxmlformats.org/officeDocument/2006/relationships/slideLayout" Target="../slideLayouts/'
        b'slideLayout7.xml"/></Relationships>')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            z.writestr(name, data)


def alt_main(work, big, writes, rows, cols, runs):
    import resource
    import lxml
    reads, wr = [], []
    text = ""
    for i in range(runs + 1):
        t = time.perf_counter()
        text = alt_read(big)
        if i:
            reads.append((time.perf_counter() - t) * 1000)
    path = None
    for i in range(runs + 1):
        path = os.path.join(work, "alt%d.pptx" % i)
        t = time.perf_counter()
        alt_write(path, writes, rows, cols)
        if i:
            wr.append((time.perf_counter() - t) * 1000)
    z = zipfile.ZipFile(path)
    body = z.read("ppt/slides/slide1.xml").decode()
    check = len(re.findall("Written paragraph", body)) == writes and "r%dc%d" % (rows - 1, cols - 1) in body
    print(json.dumps({"library": "zipfile + lxml %s" % lxml.__version__, "read_ms": reads, "write_ms": wr,
                      "text_chars": len(text), "check": check,
                      "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))


def run(ctx):
    slides, writes, rows, cols = sizes(ctx)
    work = ctx.tmp("p7p")
    data = big_pptx(slides)
    big = os.path.join(work, "big.pptx")
    with open(big, "wb") as f:
        f.write(data)
    pd = in_sandbox(ctx, "P7P", "powerpoint", {"big.pptx": data},
                    lambda d, sid, url: pp_side(ctx, d, sid, url, slides, writes, rows, cols))
    alt = alternative(__file__, work, big, writes, rows, cols, ctx.runs)
    alt_err = int(not alt["check"] or alt["text_chars"] == 0)
    lib = "%s in one Python process (python-pptx's engine, no MCP)" % alt["library"]
    return doc_rows(ctx, "P7P", "pptx", "powerpoint", pd, alt, alt_err, lib,
                    "open_presentation + extract_presentation_text of a %d-slide .pptx" % slides,
                    "create_presentation, add_slide, %d manage_text add, a %dx%d add_table, "
                    "save_presentation" % (writes, rows, cols), writes + 4)


if __name__ == "__main__" and len(sys.argv) == 8 and sys.argv[1] == "alt":
    alt_main(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]),
             int(sys.argv[7]))
