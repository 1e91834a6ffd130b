package bib

// The tables of the LaTeX decoder (latex.go).

var superscripts = map[rune]rune{'0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴', '5': '⁵', '6': '⁶', '7': '⁷', '8': '⁸', '9': '⁹',
	'+': '⁺', '-': '⁻', '−': '⁻', '=': '⁼', '(': '⁽', ')': '⁾', 'n': 'ⁿ', 'i': 'ⁱ', '∘': '°', '*': '*'}

// Letters are subscripted (COₓ, Tₘ: the subscript is part of the name),
// not superscripted: "3rd" reads better than "3ʳᵈ".

var subscripts = map[rune]rune{'0': '₀', '1': '₁', '2': '₂', '3': '₃', '4': '₄', '5': '₅', '6': '₆', '7': '₇', '8': '₈', '9': '₉',
	'+': '₊', '-': '₋', '−': '₋', '=': '₌', '(': '₍', ')': '₎',
	'a': 'ₐ', 'e': 'ₑ', 'h': 'ₕ', 'i': 'ᵢ', 'j': 'ⱼ', 'k': 'ₖ', 'l': 'ₗ', 'm': 'ₘ', 'n': 'ₙ', 'o': 'ₒ', 'p': 'ₚ',
	'r': 'ᵣ', 's': 'ₛ', 't': 'ₜ', 'u': 'ᵤ', 'v': 'ᵥ', 'x': 'ₓ'}

// symbolAccents are the accents written \'e, \"{o}, \^o, \`a, \~n, \=a, \.z.
var symbolAccents = map[byte]rune{'\'': 0x301, '`': 0x300, '^': 0x302, '"': 0x308, '~': 0x303, '=': 0x304, '.': 0x307}

// wordAccents are the accents written \c{c}, \v s, \u{g}, \H{o}, \k{a},
// \r{a} and so on, and math's \bar{x}, \hat{x}, \vec{v}.
var wordAccents = map[string]rune{"c": 0x327, "v": 0x30c, "u": 0x306, "H": 0x30b, "k": 0x328, "r": 0x30a,
	"d": 0x323, "b": 0x331, "t": 0x361, "G": 0x30f, "textcommabelow": 0x326,
	"bar": 0x304, "hat": 0x302, "widehat": 0x302, "tilde": 0x303, "widetilde": 0x303, "vec": 0x20d7, "dot": 0x307,
	"ocirc": 0x30a, "ddot": 0x308, "acute": 0x301, "grave": 0x300, "breve": 0x306, "check": 0x30c, "overline": 0x305, "mathring": 0x30a}

// spacingAccents are the accents alone (\~{} in a Mendeley path is ~).
var spacingAccents = map[rune]string{0x301: "´", 0x300: "`", 0x302: "^", 0x308: "¨", 0x303: "~", 0x304: "¯",
	0x307: "˙", 0x327: "¸", 0x30c: "ˇ", 0x306: "˘", 0x30b: "˝", 0x328: "˛", 0x30a: "˚"}

// keepArg are formatting commands whose argument is the text.
var keepArg = setOf("textit", "emph", "textbf", "textsc", "textrm", "textsf", "texttt", "textup", "textsl", "textmd",
	"textnormal", "mkbibemph", "mkbibitalic", "mkbibbold", "mbox", "hbox", "text", "textmath", "ensuremath", "NoCaseChange",
	"nocase", "uppercase", "lowercase", "MakeUppercase", "MakeLowercase", "mathrm", "mathbf", "mathit", "mathsf",
	"mathtt", "mathcal", "mathbb", "mathfrak", "mathscr", "boldsymbol", "bm", "operatorname", "underline", "uline",
	"textlatin", "textgreek", "textenglish", "smash", "fbox", "sout", "st")

// switches are commands without an argument that typeset no text: font
// and size switches, spacing, TeX's plumbing.
var switches = setOf("em", "bf", "it", "sc", "rm", "sl", "tt", "sf", "up", "md", "itshape", "bfseries", "scshape",
	"upshape", "slshape", "mdseries", "rmfamily", "sffamily", "ttfamily", "normalfont", "tiny", "scriptsize",
	"footnotesize", "small", "normalsize", "large", "Large", "LARGE", "huge", "Huge", "relax", "protect", "noindent",
	"centering", "raggedright", "null", "xspace", "displaystyle", "textstyle", "scriptstyle", "left", "right", "big",
	"Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "mathstrut", "strut", "unskip", "ignorespaces",
	"allowbreak", "hfill", "hfil", "vfill", "nobreak", "break", "limits", "nolimits", "boldmath", "unboldmath",
	"sloppy", "fussy", "frenchspacing", "nonfrenchspacing", "mathversion", "scshapefamily", "upshapefamily",
	"oldstylenums", "hyphenation", "bgroup", "egroup", "begingroup", "endgroup", "cr", "crcr", "smallskip",
	"medskip", "bigskip", "newblock")

// dropArg are commands whose argument is not text to read.
var dropArg = setOf("vphantom", "hphantom", "phantom", "noopsort", "sortname", "label", "index", "cite", "citep", "citet",
	"footnote", "ref", "pageref", "hspace", "vspace", "kern", "color", "selectlanguage")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// texSymbols are the control words that stand for a character or a word.
var texSymbols = map[string]string{
	// letters
	"i": "ı", "j": "ȷ", "aa": "å", "AA": "Å", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "o": "ø", "O": "Ø",
	"ss": "ß", "SS": "SS", "l": "ł", "L": "Ł", "dh": "ð", "DH": "Ð", "th": "þ", "TH": "Þ", "ng": "ŋ", "NG": "Ŋ",
	"dj": "đ", "DJ": "Đ", "ij": "ĳ", "IJ": "Ĳ", "texthtd": "ɗ", "textschwa": "ə", "eth": "ð",
	// punctuation and text symbols
	"textendash": "–", "textemdash": "—", "dash": "—", "ndash": "–", "mdash": "—", "textdash": "—", "textquoteleft": "‘", "textquoteright": "’", "textquotedblleft": "“",
	"textquotedblright": "”", "quotedblbase": "„", "quotesinglbase": "‚", "guillemotleft": "«", "guillemotright": "»",
	"guillemetleft": "«", "guillemetright": "»", "guilsinglleft": "‹", "guilsinglright": "›", "textquotesingle": "'",
	"textquotedbl": "\"", "textasciigrave": "`", "textexclamdown": "¡", "textquestiondown": "¿", "textellipsis": "…",
	"dots": "…", "ldots": "…", "cdots": "⋯", "textbullet": "•", "textperiodcentered": "·", "textdagger": "†",
	"dagger": "†", "textdaggerdbl": "‡", "ddagger": "‡", "S": "§", "textsection": "§", "P": "¶", "textparagraph": "¶",
	"copyright": "©", "textcopyright": "©", "textregistered": "®", "texttrademark": "™", "pounds": "£",
	"textsterling": "£", "euro": "€", "texteuro": "€", "textyen": "¥", "textcent": "¢", "textdollar": "$",
	"textdegree": "°", "degree": "°", "textcelsius": "°C", "textmu": "µ", "textonehalf": "½", "textonequarter": "¼",
	"textthreequarters": "¾", "textperthousand": "‰", "textless": "<", "textgreater": ">", "textbar": "|",
	"textbackslash": "\\", "backslash": "\\", "textasciitilde": "~", "textasciicircum": "^", "textunderscore": "_",
	"textbraceleft": "{", "textbraceright": "}", "lbrace": "{", "rbrace": "}", "textvisiblespace": "␣",
	"textnumero": "№", "textordfeminine": "ª", "textordmasculine": "º", "textminus": "−", "textpm": "±",
	"texttimes": "×", "textdiv": "÷", "slash": "/", "textslash": "/", "textfractionsolidus": "⁄",
	"nobreakspace": " ", "space": " ", "quad": " ", "qquad": " ", "enspace": " ", "thinspace": " ", "enskip": " ",
	"LaTeX": "LaTeX", "TeX": "TeX", "BibTeX": "BibTeX", "LaTeXe": "LaTeX2e", "XeTeX": "XeTeX", "LuaTeX": "LuaTeX",
	"textangstrom": "Å", "angstrom": "Å", "ell": "ℓ", "hbar": "ℏ", "Re": "ℜ", "Im": "ℑ", "aleph": "ℵ", "wp": "℘",
	// Greek
	"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ", "eta": "η",
	"theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "varkappa": "ϰ", "lambda": "λ", "mu": "μ", "nu": "ν",
	"xi": "ξ", "omicron": "ο", "pi": "π", "varpi": "ϖ", "rho": "ρ", "varrho": "ϱ", "sigma": "σ", "varsigma": "ς",
	"tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
	"Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ",
	"Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "textalpha": "α", "textbeta": "β", "textgamma": "γ", "textdelta": "δ",
	"textepsilon": "ε", "textlambda": "λ", "textpi": "π", "textsigma": "σ", "texttau": "τ", "textphi": "φ",
	"textomega": "ω", "textOmega": "Ω", "textDelta": "Δ",
	// math
	"times": "×", "pm": "±", "mp": "∓", "div": "÷", "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠", "ne": "≠",
	"approx": "≈", "sim": "∼", "simeq": "≃", "cong": "≅", "equiv": "≡", "propto": "∝", "infty": "∞", "cdot": "·",
	"circ": "∘", "bullet": "•", "ast": "∗", "star": "⋆", "to": "→", "rightarrow": "→", "leftarrow": "←", "gets": "←",
	"leftrightarrow": "↔", "Rightarrow": "⇒", "Leftarrow": "⇐", "Leftrightarrow": "⇔", "uparrow": "↑",
	"downarrow": "↓", "mapsto": "↦", "longrightarrow": "⟶", "partial": "∂", "nabla": "∇", "sum": "∑", "prod": "∏",
	"int": "∫", "oint": "∮", "in": "∈", "notin": "∉", "ni": "∋", "subset": "⊂", "subseteq": "⊆", "supset": "⊃",
	"supseteq": "⊇", "cup": "∪", "cap": "∩", "setminus": "∖", "forall": "∀", "exists": "∃", "emptyset": "∅",
	"varnothing": "∅", "neg": "¬", "lnot": "¬", "wedge": "∧", "land": "∧", "vee": "∨", "lor": "∨", "oplus": "⊕",
	"otimes": "⊗", "perp": "⊥", "parallel": "∥", "mid": "|", "vert": "|", "lvert": "|", "rvert": "|", "Vert": "‖",
	"langle": "⟨", "rangle": "⟩", "lceil": "⌈", "rceil": "⌉", "lfloor": "⌊", "rfloor": "⌋", "ll": "≪", "gg": "≫",
	"prime": "′", "lesssim": "≲", "gtrsim": "≳", "sharp": "♯", "flat": "♭", "natural": "♮", "surd": "√",
	"angle": "∠", "triangle": "△", "square": "□", "Box": "□", "diamond": "⋄", "top": "⊤", "bot": "⊥",
	"vdash": "⊢", "models": "⊨", "ldotp": ".", "colon": ":", "vdots": "⋮", "ddots": "⋱",
	"log": "log", "ln": "ln", "exp": "exp", "sin": "sin", "cos": "cos", "tan": "tan", "max": "max", "min": "min",
	"lim": "lim", "det": "det", "dim": "dim", "ker": "ker", "deg": "deg", "arg": "arg", "sup": "sup", "inf": "inf",
}
