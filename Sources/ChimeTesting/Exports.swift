// `ManualClock` lives in ChimeCore (engine tests need no Apple layer); `import ChimeTesting` still
// brings it, with the rest of ChimeCore, as before it moved.
@_exported import ChimeCore
