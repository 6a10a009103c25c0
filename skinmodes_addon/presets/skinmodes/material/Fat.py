import bpy

settings = bpy.context.object.skinmodes  # type: ignore[union-attr]

settings.material_preset = "FAT"
settings.wobble_hz = 3.0
settings.damping_ratio = 0.2
settings.poisson_ratio = 0.4
settings.youngs_modulus = 10000.0
settings.density = 950.0
settings.amount = 1.0
settings.swing_appendages = True
