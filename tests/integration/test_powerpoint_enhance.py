"""`mcpbox mcp powerpoint`: manage_image "enhance" (2.0.6's
design_utils.enhance_image_with_pillow and apply_professional_image_enhancement)
against Pillow itself (Debian's python3-pil, the library upstream calls): for
L, LA, RGB and RGBA PNGs and a JPEG, every enhancement, the Gaussian blur and
the four named filters give Pillow's pixels; the "presentation" preset; JPEG
output; upstream's texts for missing files, base64 sources and bad paths."""
import json
import os
import random

import pytest

from test_server_powerpoint import Checked, pp, root  # noqa: F401

PIL = pytest.importorskip("PIL")
from PIL import Image, ImageEnhance, ImageFilter  # noqa: E402

FILTERS = {"BLUR": ImageFilter.BLUR, "SHARPEN": ImageFilter.SHARPEN, "SMOOTH": ImageFilter.SMOOTH,
           "EDGE_ENHANCE": ImageFilter.EDGE_ENHANCE}


def upstream(path, b=1.0, c=1.0, s=1.0, sh=1.0, blur=0, f=None):
    """enhance_image_with_pillow's steps"""
    img = Image.open(path)
    if b != 1.0:
        img = ImageEnhance.Brightness(img).enhance(b)
    if c != 1.0:
        img = ImageEnhance.Contrast(img).enhance(c)
    if s != 1.0:
        img = ImageEnhance.Color(img).enhance(s)
    if sh != 1.0:
        img = ImageEnhance.Sharpness(img).enhance(sh)
    if blur > 0:
        img = img.filter(ImageFilter.GaussianBlur(radius=blur))
    if f and f.upper() in FILTERS:
        img = img.filter(FILTERS[f.upper()])
    return img


def noise(mode, w, h, path, rnd):
    im = Image.new(mode, (w, h))
    n = len(mode)
    im.putdata([tuple(rnd.randrange(256) for _ in range(n)) if n > 1 else rnd.randrange(256)
                for _ in range(w * h)])
    im.save(path)


CASES = [dict(b=1.3), dict(b=0.4), dict(c=1.7), dict(c=0.5), dict(s=1.6), dict(s=0.0), dict(sh=2.0),
         dict(sh=0.3), dict(blur=1.5), dict(blur=0.5), dict(blur=4.2), dict(f="blur"), dict(f="SHARPEN"),
         dict(f="smooth"), dict(f="edge_enhance"), dict(f="emboss"), dict(b=1.2, c=0.9, s=1.4, sh=1.5, blur=1)]


def test_enhance_is_pillow(pp, root):
    rnd = random.Random(7)
    noise("RGB", 37, 23, str(root / "rgb.png"), rnd)
    noise("RGBA", 19, 31, str(root / "rgba.png"), rnd)
    noise("L", 25, 17, str(root / "l.png"), rnd)
    noise("LA", 9, 8, str(root / "la.png"), rnd)
    Image.open(str(root / "rgb.png")).save(str(root / "rgb.jpg"), quality=90)
    pp("create_presentation")
    pp("add_slide", {"presentation_id": "presentation_1"})
    for src in ("rgb.png", "rgba.png", "l.png", "la.png", "rgb.jpg"):
        for k in CASES:
            d = pp("manage_image", {"slide_index": 0, "operation": "enhance", "image_source": src,
                                    "presentation_id": "presentation_1", "output_path": "out.png",
                                    "brightness": k.get("b", 1.0), "contrast": k.get("c", 1.0),
                                    "saturation": k.get("s", 1.0), "sharpness": k.get("sh", 1.0),
                                    "blur_radius": k.get("blur", 0), "filter_type": k.get("f")})
            assert d == {"message": "Enhanced image: %s" % src, "enhanced_path": "out.png"}
            got, want = Image.open(str(root / "out.png")), upstream(str(root / src), **k)
            assert got.mode == want.mode and got.size == want.size
            assert list(got.getdata()) == list(want.getdata()), (src, k)
    # the "presentation" preset ignores the other options
    d = pp("manage_image", {"slide_index": 0, "operation": "enhance", "image_source": "rgba.png",
                            "enhancement_style": "presentation", "brightness": 3.0,
                            "presentation_id": "presentation_1"})
    path = d["enhanced_path"]
    assert path.startswith("/tmp/tmp") and path.endswith(".png")
    want = upstream(str(root / "rgba.png"), b=1.1, c=1.15, s=1.1, sh=1.2)
    assert list(Image.open(path).getdata()) == list(want.getdata())
    os.unlink(path)
    # JPEG output: libjpeg at Pillow's default quality 75
    pp("manage_image", {"slide_index": 0, "operation": "enhance", "image_source": "rgb.png", "contrast": 1.3,
                        "output_path": "out.jpg", "presentation_id": "presentation_1"})
    want = upstream(str(root / "rgb.png"), c=1.3)
    want.save(str(root / "want.jpg"))
    assert list(Image.open(str(root / "out.jpg")).getdata()) == list(Image.open(str(root / "want.jpg")).getdata())


def test_enhance_errors(pp, root):
    pp("create_presentation")
    pp("add_slide", {"presentation_id": "presentation_1"})
    pid = {"presentation_id": "presentation_1"}
    assert pp("manage_image", {"slide_index": 0, "operation": "enhance", "image_source": "x.png", **pid}) == {
        "error": "Image file not found: x.png"}
    assert pp("manage_image", {"slide_index": 0, "operation": "enhance", "image_source": "aGk=",
                               "source_type": "base64", **pid}) == {
        "error": "Enhancement operation requires file path, not base64 data"}
    (root / "junk.png").write_bytes(b"not an image at all")
    assert pp("manage_image", {"slide_index": 0, "operation": "enhance", "image_source": "junk.png", **pid}) == {
        "error": "Failed to enhance image: cannot identify image file 'junk.png'"}
    Image.new("RGBA", (4, 4), (1, 2, 3, 4)).save(str(root / "a.png"))
    assert pp("manage_image", {"slide_index": 0, "operation": "enhance", "image_source": "a.png",
                               "brightness": 2.0, "output_path": "a.jpg", **pid}) == {
        "error": "Failed to enhance image: cannot write mode RGBA as JPEG"}
    assert pp("manage_image", {"slide_index": 0, "operation": "enhance", "image_source": "a.png",
                               "output_path": "a.xyz", **pid}) == {
        "error": "Failed to enhance image: unknown file extension: .xyz"}
    assert pp("manage_image", {"slide_index": 0, "operation": "enhance", "image_source": "a.png",
                               "output_path": "no/such/dir.png", **pid}) == {
        "error": "Failed to enhance image: [Errno 2] No such file or directory: 'no/such/dir.png'"}
    Image.new("P", (4, 4)).save(str(root / "p.png"))
    assert pp("manage_image", {"slide_index": 0, "operation": "enhance", "image_source": "p.png",
                               "brightness": 1.5, **pid}) == {"error": "Failed to enhance image: image has wrong mode"}
    # a truncated PNG fails cleanly
    data = (root / "a.png").read_bytes()
    (root / "t.png").write_bytes(data[:40])
    d = pp("manage_image", {"slide_index": 0, "operation": "enhance", "image_source": "t.png", **pid})
    assert d["error"].startswith("Failed to enhance image: ")
    assert json.dumps(d)
