"""Checks a figure tools/plot.py wrote (tests/cli/plot.cmake).

  plot_check.py png FILE MIN_WIDTH MIN_HEIGHT   a PNG of at least that many pixels, not blank
  plot_check.py svg FILE TEXT...                an SVG whose text elements hold each TEXT
"""
import sys
import xml.etree.ElementTree as ET


def main(kind, path, *rest):
    if kind == "png":
        import matplotlib.image
        image = matplotlib.image.imread(path)
        height, width = image.shape[0], image.shape[1]
        assert width >= int(rest[0]) and height >= int(rest[1]), (width, height)
        # Not blank: more than a handful of distinct colours.
        colours = {tuple(p) for p in image.reshape(-1, image.shape[2])[::97].tolist()}
        assert len(colours) > 8, len(colours)
        print(f"png {width}x{height} ok")
    else:
        root = ET.parse(path).getroot()
        assert root.tag.endswith("svg"), root.tag
        texts = [" ".join(t.itertext()) for t in root.iter() if t.tag.endswith("text")]
        missing = [want for want in rest if not any(want in t for t in texts)]
        assert not missing, (missing, texts[:40])
        print("svg ok")


if __name__ == "__main__":
    main(*sys.argv[1:])
