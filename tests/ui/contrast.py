"""WCAG contrast of the text a browser rendered: getComputedStyle colours against the background behind them.

``low_contrast(page)`` walks every element with text of its own (into Panel's shadow roots), takes
its computed ``color`` and the first opaque background behind it (its own, its ancestors', across
shadow roots to the host; translucent layers blended in), and returns the texts below WCAG AA: 4.5:1,
or 3:1 for large text (24 px, or 18.66 px bold) and for a plot toolbar's icon glyphs (non-text, WCAG 1.4.11).  Only what is on screen counts (visible, with a box).
"""
from __future__ import annotations

CONTRAST_JS = r"""
(scope) => {
  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) {
      // color(srgb r g b / a) from color-mix()
      const s = c.match(/color\(srgb ([^)]+)\)/);
      if (!s) return null;
      const [rgb, alpha] = s[1].split('/');
      const v = rgb.trim().split(/\s+/).map(Number);
      return [v[0] * 255, v[1] * 255, v[2] * 255, alpha === undefined ? 1 : Number(alpha)];
    }
    const v = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
    return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
  };
  const over = (top, bottom) => {
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat([1]);
  };
  const lum = (c) => {
    const f = (x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const parent = (el) => el.parentElement || (el.getRootNode && el.getRootNode().host) || null;
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = parent(e)) {
      const bg = parse(getComputedStyle(e).backgroundColor);
      if (bg && bg[3] > 0) { layers.push(bg); if (bg[3] >= 1) break; }
    }
    let base = [255, 255, 255, 1];  // the canvas behind everything
    if (layers.length && layers[layers.length - 1][3] >= 1) base = layers.pop();
    for (let i = layers.length - 1; i >= 0; i--) base = over(layers[i], base);
    return base;
  };
  const out = [];
  const visit = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) visit(el.shadowRoot);
      const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
      if (!own) continue;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || style.display === 'none' || Number(style.opacity) === 0) continue;
      const box = el.getBoundingClientRect();
      if (box.width < 1 || box.height < 1) continue;
      if (el.closest && el.closest('script, style, noscript, .bk-Canvas')) continue;
      const fg0 = parse(style.color);
      if (!fg0) continue;
      const bg = background(el);
      const fg = over(fg0, bg);
      const [a, b] = [lum(fg), lum(bg)];
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
      const large = size >= 24 || (bold && size >= 18.66);
      // a toolbar's icon glyph is a user-interface component, not text: WCAG 1.4.11's 3:1
      const icon = /\bbk-tool/.test(String(el.className));
      const need = large || icon ? 3 : 4.5;
      out.push({text: own.slice(0, 60), ratio: Math.round(ratio * 100) / 100, need,
                                  color: style.color, background: 'rgb(' + bg.slice(0, 3).map(Math.round) + ')',
                                  cls: (String(el.className) + ' ' + String((parent(el) || {}).className || '')).slice(0, 120)});
    }
  };
  visit(scope || document);
  return out;
}
"""


def texts(page) -> list[dict]:
    """Every rendered text of ``page`` with its contrast ratio and what WCAG AA needs (``ratio``, ``need``)."""
    return page.evaluate(CONTRAST_JS)


def low_contrast(page) -> list[dict]:
    """Every rendered text of ``page`` below WCAG AA (see the module's docstring)."""
    return [t for t in texts(page) if t["ratio"] < t["need"]]
