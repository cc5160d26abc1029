import { readFileSync } from 'node:fs';
import { compileProfile } from '../profiles/compiler';
const docs = {
  three: { id: 'b', version: 1, target: 'metal', steps: [1, 2, 3].map((i) => ({ use: 'event.append', with: { message: `s${i}` } })) },
  commission: JSON.parse(readFileSync('profiles/shipped/metal-commission.json', 'utf8')),
};
for (const [name, doc] of Object.entries(docs)) {
  for (let i = 0; i < 200; i++) compileProfile(doc, 'root');
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 2000; i++) compileProfile(doc, 'root');
  console.log(name, Number(process.hrtime.bigint() - t0) / 2000 / 1e6, 'ms');
}
