"""Grades `ember compat explain` on the held-out set of 2026-12 (README.md here):
matched, right cause by the labels, false positives on the harmless texts."""
import pathlib
HERE = pathlib.Path(__file__).parent
import tomllib, collections
from ember.tools import compat_eval
from ember.tools.compat_eval import load_matrix
M, _ = load_matrix()
labels = tomllib.load(open(HERE / 'labels.toml','rb'))['label']
files = {f: tomllib.load(open(HERE / f,'rb')) for f in ('gpu_sealed.toml','other_sealed.toml')}
tot=match=right=0; fam=collections.defaultdict(lambda:[0,0,0]); misses=[]
for lab in labels:
    m = files[lab['file']]['message'][lab['index']]
    assert m['source']==lab['source']
    found=[e.id for e in compat_eval.explain(m['text'], M)]
    f=fam[m['family']]; f[0]+=1; tot+=1
    if found: match+=1; f[1]+=1
    ok = bool(found) and found[0] in lab['accept']
    if ok: right+=1; f[2]+=1
    else: misses.append((m['family'], m['source'], found[:2], lab['accept']))
harm=[h for f in files.values() for h in f.get('harmless',[])]
fp=[h['source'] for h in harm if compat_eval.explain(h['text'], M)]
print(f"sealed: {tot} messages, matched {match} ({100*match/tot:.0f}%), right cause {right} ({100*right/tot:.1f}%); harmless {len(harm)}, false positives {len(fp)} {fp}")
for k,v in sorted(fam.items()): print(f"  {k}: {v[0]} msgs, matched {v[1]}, right {v[2]}")
print("misses:")
for x in misses: print("  ",x)
