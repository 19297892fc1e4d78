// Reads the loadable-components stats file that Rails uploads beside the
// server bundle (a companion file, PROTOCOL.md §6): fs relative to __dirname,
// on every render, the way @loadable/server's ChunkExtractor({ statsFile }) does.
import fs from 'fs';
import path from 'path';

export function readLoadableStats() {
  return JSON.parse(fs.readFileSync(path.join(__dirname, 'loadable-stats.json'), 'utf8'));
}

// Chunk names and asset URLs for a route's chunk group ('main' always first).
export function chunksFor(stats, group) {
  const names = ['main', ...(stats.namedChunkGroups[group] ? stats.namedChunkGroups[group].chunks : [])];
  const assets = [];
  for (const name of names) {
    for (const file of stats.assetsByChunkName[name] || []) {
      if (file.endsWith('.js')) assets.push(stats.publicPath + file);
    }
  }
  return { names, assets };
}
