"""What every lab does last: keep its facts as OUT.json and show them."""
import json
import os


def write_facts(out, facts):
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(facts, f, indent=2)
        f.write("\n")
    print(json.dumps(facts, indent=2))
