package vm

import "math"

// States of the JSON scanner (dtrace_json_state_t).
const (
	jsonRest = iota + 1
	jsonObject
	jsonString
	jsonStringEscape
	jsonStringEscapeUnicode
	jsonColon
	jsonComma
	jsonValue
	jsonIdentifier
	jsonNumber
	jsonNumberFrac
	jsonNumberExp
	jsonCollectObject
)

// jsonSubr runs json(json, selector): the value the selector
// ("a.b[2].c") names in a JSON text, as a string, or NULL.
func (m *Machine) jsonSubr(rd *uint64, text, elem uint64) error {
	size := uint64(m.cfg.StrSize)
	textLen, err := m.strlen(text, size)
	if err != nil {
		return err
	}
	elemLen, err := m.strlen(elem, size)
	if err != nil {
		return err
	}
	if err := m.canload(text, textLen+1); err != nil {
		return err
	}
	if err := m.canload(elem, elemLen+1); err != nil {
		return err
	}
	if !m.inScratch(textLen + 1 + elemLen + 1) {
		return fault(FaultNoScratch, 0)
	}
	// The selector becomes a list of NUL-terminated keys.
	var list []byte
	nelems := 1
	for i := uint64(0); i < elemLen; i++ {
		c, err := m.load8(elem + i)
		if err != nil {
			return err
		}
		if i == 0 && c == '[' || c == ']' {
			continue
		}
		if c == '.' || c == '[' {
			nelems++
			c = 0
		}
		list = append(list, c)
	}
	list = append(list, 0)
	addr, buf := m.scratchNext()
	found, err := m.json(size, text, list, nelems, buf[:textLen+1])
	if err != nil {
		return err
	}
	*rd = 0
	if found {
		*rd = addr
		m.scratchPtr += textLen + 1
	}
	return nil
}

// json scans a JSON text for the value the keys in list name and
// leaves it in dest (dtrace_json): just enough JSON to extract one
// value, one character at a time, within size bytes.
func (m *Machine) json(size, text uint64, list []byte, nelems int, dest []byte) (bool, error) {
	state := jsonRest
	arrayElem, arrayPos := int64(math.MinInt64), int64(0)
	escapes := 0
	var stringIsKey, collectObject, foundKey, inArray bool
	var braces, brackets uint32
	elem := 0 // the current key: list[elem:] up to its NUL
	dd := 0
	put := func(c byte) {
		if dd < len(dest) {
			dest[dd] = c
		}
		dd++
	}
	// end terminates the string in dest and starts a new one.
	end := func() string {
		n := min(dd, len(dest)-1)
		dest[n] = 0
		dd = 0
		return string(dest[:n])
	}
	key := func() string {
		b := list[elem:]
		for i, c := range b {
			if c == 0 {
				return string(b[:i])
			}
		}
		return string(b)
	}
	index := func() int64 {
		v, _ := strtoll(func(i uint64) (byte, error) {
			if j := uint64(elem) + i; j < uint64(len(list)) {
				return list[j], nil
			}
			return 0, nil
		}, 10, size)
		return v
	}

	for cur := text; cur < text+size; cur++ {
		cc, err := m.load8(cur)
		if err != nil {
			return false, err
		}
		if cc == 0 {
			return false, nil
		}
		switch state {
		case jsonRest:
			switch {
			case isspace(cc):
			case cc == '{':
				state = jsonObject
			case cc == '[':
				inArray, arrayPos = true, 0
				arrayElem = index()
				foundKey = arrayElem == 0
				state = jsonValue
			default:
				return false, nil // not an object or array
			}

		case jsonObject:
			switch {
			case isspace(cc):
			case cc == '"':
				state, stringIsKey = jsonString, true
			default:
				return false, nil // no key, or the end of the object
			}

		case jsonString:
			switch {
			case cc == '\\':
				put('\\')
				state = jsonStringEscape
			case cc == '"' && collectObject:
				// The string is part of an object being collected.
				put(cc)
				collectObject = false
				state = jsonCollectObject
			case cc == '"':
				s := end()
				if stringIsKey {
					if s == key() {
						foundKey = true
					}
				} else if foundKey {
					return nelems <= 1, nil
				}
				state = jsonComma
				if stringIsKey {
					state = jsonColon
				}
				stringIsKey = false
			default:
				put(cc)
			}

		case jsonStringEscape:
			put(cc)
			state = jsonString
			if cc == 'u' {
				escapes = 0
				state = jsonStringEscapeUnicode
			}

		case jsonStringEscapeUnicode:
			if !isxdigit(cc) {
				return false, nil // not four hexadecimal digits
			}
			put(cc)
			if escapes++; escapes == 4 {
				state = jsonString
			}

		case jsonColon:
			switch {
			case isspace(cc):
			case cc == ':':
				state = jsonValue
			default:
				return false, nil
			}

		case jsonComma:
			switch {
			case isspace(cc):
			case cc == ',' && inArray:
				state = jsonValue
				if arrayPos++; arrayPos == arrayElem {
					foundKey = true
				}
			case cc == ',':
				state = jsonObject
			default:
				return false, nil // the end without the key
			}

		case jsonIdentifier:
			if islower(cc) {
				put(cc)
				break
			}
			switch end() {
			case "true", "false", "null":
				if foundKey {
					return nelems <= 1, nil
				}
				cur--
				state = jsonComma
			default:
				return false, nil
			}

		case jsonNumber, jsonNumberFrac, jsonNumberExp:
			if state == jsonNumber {
				if cc == '.' {
					put(cc)
					state = jsonNumberFrac
					break
				}
				if cc == 'x' || cc == 'X' {
					return false, nil // no hexadecimal or octal
				}
			}
			if state != jsonNumberExp {
				if cc == 'e' || cc == 'E' {
					put(cc)
					state = jsonNumberExp
					break
				}
				if cc == '+' || cc == '-' {
					return false, nil // a sign only in the exponent
				}
			}
			if isdigit(cc) || cc == '+' || cc == '-' {
				put(cc)
				break
			}
			end()
			if foundKey {
				return nelems <= 1, nil
			}
			cur--
			state = jsonComma

		case jsonValue:
			switch {
			case isspace(cc):
			case cc == '{' || cc == '[':
				if nelems > 1 && foundKey {
					// Descend: the next key applies inside.
					inArray = cc == '['
					for elem < len(list) && list[elem] != 0 {
						elem++
					}
					elem++
					nelems--
					dd = 0
					if inArray {
						state, arrayPos = jsonValue, 0
						arrayElem = index()
						foundKey = arrayElem == 0
					} else {
						foundKey = false
						state = jsonObject
					}
					break
				}
				// Skip the nested value, or return it whole.
				if cc == '[' {
					brackets = 1
				} else {
					braces = 1
				}
				put(cc)
				state = jsonCollectObject
			case cc == '"':
				state = jsonString
			case islower(cc):
				put(cc)
				state = jsonIdentifier
			case cc == '-' || isdigit(cc):
				put(cc)
				state = jsonNumber
			default:
				return false, nil
			}

		case jsonCollectObject:
			put(cc)
			if cc == '"' {
				collectObject = true
				state = jsonString
				break
			}
			switch cc {
			case ']':
				if brackets == 0 {
					return false, nil
				}
				brackets--
			case '}':
				if braces == 0 {
					return false, nil
				}
				braces--
			case '{':
				braces++
			case '[':
				brackets++
			}
			if brackets == 0 && braces == 0 {
				if foundKey {
					end()
					return true, nil
				}
				dd = 0
				state = jsonComma
			}
		}
	}
	return false, nil
}
